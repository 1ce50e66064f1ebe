#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `--version` names what the worker was built with, one item a line, and each item says what CMake
# found for this build (WS_EXPECT_*, set by tests/CMakeLists.txt): a bug report can tell builds apart.
set -u
engine=$1
fail() { echo "FAIL: $*"; exit 1; }
out=$("$engine" --version) || fail "exit $?"
echo "$out"
[ "$(echo "$out" | head -1)" = "wanstudio-engine ${WS_EXPECT_VERSION:?}" ] || fail "first line: $(echo "$out" | head -1)"
item() { echo "$out" | awk -v k="$1" '$1 == k { print $2 }'; }
for k in libtorch cuda nccl sdpa gloo video; do
  [ "$(echo "$out" | awk -v k="$k" '$1 == k' | wc -l)" = 1 ] || fail "no single '$k' line"
done
[ "$(item libtorch)" = "${WS_EXPECT_LIBTORCH:?}" ] || fail "libtorch $(item libtorch), CMake found $WS_EXPECT_LIBTORCH"
[ "$(item cuda)" = "${WS_EXPECT_CUDA:?}" ] || fail "cuda $(item cuda), expected $WS_EXPECT_CUDA"
[ "$(item nccl)" = "${WS_EXPECT_NCCL:?}" ] || fail "nccl $(item nccl), expected $WS_EXPECT_NCCL"
[ "$(item sdpa)" = "${WS_EXPECT_SDPA:?}" ] || fail "sdpa $(item sdpa), expected $WS_EXPECT_SDPA"
[ "$(item gloo)" = "${WS_EXPECT_GLOO:?}" ] || fail "gloo $(item gloo), expected $WS_EXPECT_GLOO"
[ "$(item video)" = "${WS_EXPECT_VIDEO:?}" ] || fail "video $(item video), expected $WS_EXPECT_VIDEO"
# The CPU GEMM: chosen by the machine unless WANSTUDIO_GEMM says; oneDNN only where built with it.
case "$(item cpu_gemm)" in onednn | libtorch) ;; *) fail "cpu_gemm '$(item cpu_gemm)'" ;; esac
gemm_of() { WANSTUDIO_GEMM=$1 "$engine" --version | awk '$1 == "cpu_gemm" { print $2 }'; }
[ "$(gemm_of libtorch)" = libtorch ] || fail "WANSTUDIO_GEMM=libtorch: $(gemm_of libtorch)"
want=libtorch
[ "${WS_EXPECT_ONEDNN:?}" = yes ] && want=onednn
[ "$(gemm_of onednn)" = "$want" ] || fail "WANSTUDIO_GEMM=onednn: $(gemm_of onednn), expected $want"
err=$(WANSTUDIO_GEMM=mkl "$engine" --version 2>&1 >/dev/null); rc=$?
[ $rc = 1 ] || fail "WANSTUDIO_GEMM=mkl exited $rc"
[ "$(echo "$err" | wc -l)" = 1 ] && echo "$err" | grep -q "WANSTUDIO_GEMM must be onednn or libtorch" ||
  fail "WANSTUDIO_GEMM=mkl: $err"
# The CPU attention: tiled where oneDNN is built in, unless WANSTUDIO_ATTENTION=composed.
att_of() { WANSTUDIO_ATTENTION=$1 "$engine" --version | awk '$1 == "cpu_attention" { print $2 }'; }
want=composed
[ "$WS_EXPECT_ONEDNN" = yes ] && want=tiled
[ "$(att_of "")" = "$want" ] || fail "cpu_attention: $(att_of ""), expected $want"
[ "$(att_of composed)" = composed ] || fail "WANSTUDIO_ATTENTION=composed: $(att_of composed)"
err=$(WANSTUDIO_ATTENTION=flash "$engine" --version 2>&1 >/dev/null); rc=$?
[ $rc = 1 ] || fail "WANSTUDIO_ATTENTION=flash exited $rc"
[ "$(echo "$err" | wc -l)" = 1 ] && echo "$err" | grep -q "WANSTUDIO_ATTENTION must be tiled or composed" ||
  fail "WANSTUDIO_ATTENTION=flash: $err"
echo "PASS"
