#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Debian package: CPack builds wanstudio_<version>_amd64.deb from this build's install tree;
# lintian finds no errors; its control data, file list, desktop entry, icons, metainfo and man
# pages are there; and the programs unpacked into a scratch root run from the install with no
# environment variables: --version (the studio names the installed engine and presets), the
# schema, and a short demo run from the installed preset into a folder of the user's.
source "$(dirname "$0")/lib/common.sh"

build=$(cd "$(dirname "$engine")/.." && pwd)
# The package depends on Debian's libtorch: only the Debian build makes one (a PyPI LibTorch
# build has nothing of Debian's to depend on).
torch_lib=$(readlink -f "$(ldd "$engine" | awk '/libtorch_cpu/ {print $3}')")  # /lib is /usr/lib
case "$torch_lib" in
  /usr/lib/*) ;;
  *) echo "SKIP: the .deb is made from the Debian LibTorch build; this worker links $torch_lib"; exit 77 ;;
esac
[ -f "$build/CPackConfig.cmake" ] || fail "no CPackConfig.cmake in $build"
command -v lintian >/dev/null || fail "lintian is missing (packaging/deps.sh installs it)"
[ -x "$build/app/wanstudio" ] || fail "the package test needs the studio (WANSTUDIO_GUI=ON)"

# 1. Build the package.
(cd "$build" && cpack -G DEB -B "$tmp/pkg" >"$tmp/cpack.log" 2>&1) || fail "cpack: $(tail -5 "$tmp/cpack.log")"
version=$(sed -n 's/^project(WanStudio VERSION \([0-9.]*\).*/\1/p' "$(dirname "$0")/../../CMakeLists.txt")
deb="$tmp/pkg/wanstudio_${version}_amd64.deb"
[ -s "$deb" ] || fail "no $(basename "$deb"): $(ls "$tmp/pkg")"

# 2. lintian: no errors (warnings are listed in the log, not fatal).
lintian --fail-on error "$deb" >"$tmp/lintian.log" 2>&1 || fail "lintian: $(grep '^E:' "$tmp/lintian.log" | head -5)"

# 3. Control data: dependencies computed from the binaries, and the file list.
info=$(dpkg-deb -f "$deb" Package Version Architecture Depends)
grep -q '^Package: wanstudio$' <<<"$info" || fail "package name: $info"
grep -q '^Architecture: amd64$' <<<"$info" || fail "architecture: $info"
for dep in libtorch libqt6widgets6 libavcodec libyaml-cpp libsentencepiece; do
  grep -q "^Depends:.*$dep" <<<"$info" || fail "Depends lacks $dep: $info"
done
files=$(dpkg-deb -c "$deb" | awk '{print $6}')
for f in ./usr/bin/wanstudio ./usr/bin/wanstudio-engine ./usr/lib/wanstudio/libwanstudio_spm.so \
         ./usr/share/wanstudio/configs/demo-upsampler.yaml ./usr/share/wanstudio/configs/demo/demo_vae.safetensors \
         ./usr/share/applications/io.github.wanstudio.WanStudio.desktop \
         ./usr/share/metainfo/io.github.wanstudio.WanStudio.metainfo.xml \
         ./usr/share/icons/hicolor/48x48/apps/wanstudio.png ./usr/share/icons/hicolor/256x256/apps/wanstudio.png \
         ./usr/share/icons/hicolor/scalable/apps/wanstudio.svg \
         ./usr/share/man/man1/wanstudio.1.gz ./usr/share/man/man1/wanstudio-engine.1.gz \
         ./usr/share/doc/wanstudio/copyright ./usr/share/doc/wanstudio/changelog.gz \
         ./usr/share/doc/wanstudio/README.md ./usr/share/doc/wanstudio/docs/design/architecture.md; do
  grep -qx "$f" <<<"$files" || fail "the package lacks $f"
done
# The man pages are the programs' --help.
dpkg-deb -x "$deb" "$tmp/root"
zcat "$tmp/root/usr/share/man/man1/wanstudio-engine.1.gz" | grep -q 'train\\-upsampler' || fail "engine man page without its verbs"
zcat "$tmp/root/usr/share/man/man1/wanstudio.1.gz" | grep -q 'batch' || fail "studio man page without --batch"

# 4. The installed programs, with no variables pointing anywhere.
clean=(env -u WANSTUDIO_ENGINE -u WANSTUDIO_CONFIGS -u WANSTUDIO_SPM_MODULE)
r="$tmp/root/usr"
"${clean[@]}" "$r/bin/wanstudio-engine" --version | grep -qx "wanstudio-engine $version" || fail "engine --version"
"${clean[@]}" "$r/bin/wanstudio-engine" schema train-upsampler | grep -q '"video_sample_size"' || fail "installed schema"
v=$("${clean[@]}" "$r/bin/wanstudio" --version) || fail "studio --version"
grep -qx "wanstudio $version" <<<"$v" || fail "studio version: $v"
grep -qx "engine: $r/bin/wanstudio-engine" <<<"$v" || fail "the installed studio does not find the installed engine: $v"
grep -qx "presets: $r/share/wanstudio/configs" <<<"$v" || fail "the installed studio does not find the presets: $v"
# A short demo run from the installed preset (its relative paths point into the read-only
# share/ folder; the user's own folders come on the command line).
user="$tmp/home/runs"
before=$(find "$r/share/wanstudio" -printf '%p %s %T@\n' | sort)
"${clean[@]}" "$r/bin/wanstudio" --batch "$r/share/wanstudio/configs/demo-upsampler.yaml" \
  --output_dir "$user/run" --train_data_dir "$user/data" --train_data_meta "$user/data/metadata.json" \
  --max_train_steps 2 --validation_steps 100000 --video_sample_size 128 --video_sample_n_frames 5 \
  >"$tmp/demo.out" 2>"$tmp/demo.err" || fail "installed demo run: $(tail -5 "$tmp/demo.err")"
grep -q '"status":"completed","step":2' "$user/run/events.jsonl" || fail "the installed demo did not complete"
[ -d "$user/run/checkpoint-2" ] || fail "no checkpoint-2 from the installed demo"
[ "$(find "$r/share/wanstudio" -printf '%p %s %T@\n' | sort)" = "$before" ] || fail "the run wrote into the installed share folder"
echo ok
