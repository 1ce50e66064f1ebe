// SPDX-License-Identifier: Apache-2.0
#include "cli/launch.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "core/error.h"
#include "cli/args.h"
#include "cli/verb.h"
#include "runtime/signal_thread.h"

namespace ws::cli {

namespace {

volatile sig_atomic_t g_forward = 0;  // the last signal to pass on, 0 when none is pending

void on_signal(int sig) { g_forward = sig; }

// A port the kernel reports free on the loopback (a race with other programs is possible, but
// the rendezvous then fails with a clear message instead of joining a stranger).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw Error(std::string("launch: socket: ") + std::strerror(errno));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ::close(fd);
    throw Error(std::string("launch: no free port: ") + std::strerror(errno));
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

std::string self_exe() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw Error("launch: cannot find this executable (/proc/self/exe)");
  return std::string(buf, static_cast<size_t>(n));
}

}  // namespace

int run_launch(const std::vector<std::string>& args) {
  Args a("launch", "launch --nproc N [--master_port P] VERB [ARGS...]",
         "Runs VERB as N data-parallel ranks on this machine (torchrun's variables, Gloo on the CPU).\n"
         "stdout carries rank 0's events; every rank logs to stderr; SIGINT/SIGTERM go to all ranks;\n"
         "the exit status is rank 0's.");
  a.value("nproc", "N", "ranks to start (required)", int_range(1, 1024))
      .value("nproc_per_node", "N", "the same as --nproc (torchrun's name)", int_range(1, 1024))
      .value("master_port", "P", "rendezvous port (default: a free one)", int_range(1, 65535))
      .forward_from_first_positional();
  if (!a.parse(args)) return 0;
  const int nproc = static_cast<int>(a.integer(a.has("nproc") ? "nproc" : "nproc_per_node", 0));
  int port = static_cast<int>(a.integer("master_port", 0));
  if (nproc < 1) throw UsageError("launch needs --nproc N");
  if (a.rest().empty()) throw UsageError("launch needs a verb to run, e.g. train-experts --config RUN.yaml");
  const std::string verb = a.rest().front();
  if (verb == "launch" || !find_verb(verb)) throw UsageError("launch: unknown verb '" + verb + "'");
  const std::vector<std::string> rest(a.rest().begin() + 1, a.rest().end());
  if (port == 0) port = free_port();
  const std::string exe = self_exe();

  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);

  std::vector<pid_t> pids(static_cast<size_t>(nproc), -1);
  for (int r = 0; r < nproc; ++r) {
    const pid_t pid = ::fork();
    if (pid < 0) throw Error(std::string("launch: fork: ") + std::strerror(errno));
    if (pid == 0) {
      signal(SIGINT, SIG_DFL);
      signal(SIGTERM, SIG_DFL);
      runtime::unblock_routed_signals();  // the mask survives exec
      setenv("WORLD_SIZE", std::to_string(nproc).c_str(), 1);
      setenv("RANK", std::to_string(r).c_str(), 1);
      setenv("LOCAL_RANK", std::to_string(r).c_str(), 1);
      setenv("MASTER_ADDR", "127.0.0.1", 1);
      setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
      unsetenv("TORCHELASTIC_USE_AGENT_STORE");
      if (r > 0) {
        // Only rank 0 speaks the event stream and reads the control lines (cancel, save); the
        // ranks agree on them after each step.
        const int null = ::open("/dev/null", O_WRONLY);
        if (null >= 0) ::dup2(null, STDOUT_FILENO);
        const int null_in = ::open("/dev/null", O_RDONLY);
        if (null_in >= 0) ::dup2(null_in, STDIN_FILENO);
      }
      std::vector<std::string> argv_s{exe, verb};
      argv_s.insert(argv_s.end(), rest.begin(), rest.end());
      std::vector<char*> argv;
      for (auto& s : argv_s) argv.push_back(s.data());
      argv.push_back(nullptr);
      ::execv(exe.c_str(), argv.data());
      std::fprintf(stderr, "error: launch: cannot run %s: %s\n", exe.c_str(), std::strerror(errno));
      ::_exit(127);
    }
    pids[static_cast<size_t>(r)] = pid;
  }
  std::fprintf(stderr, "launch: %d ranks of %s on 127.0.0.1:%d\n", nproc, verb.c_str(), port);

  int rank0_status = 0;
  bool rank0_done = false;
  int alive = nproc;
  std::chrono::steady_clock::time_point failed_at{};
  bool failure = false;
  while (alive > 0) {
    if (const int sig = g_forward) {
      g_forward = 0;
      for (pid_t p : pids)
        if (p > 0) ::kill(p, sig);
    }
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      for (size_t r = 0; r < pids.size(); ++r) {
        if (pids[r] != pid) continue;
        pids[r] = -1;
        --alive;
        if (r == 0) rank0_status = status, rank0_done = true;
        const bool ok = WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 130);
        if (!ok && !failure) {
          failure = true;
          failed_at = std::chrono::steady_clock::now();
          std::fprintf(stderr, "launch: rank %zu %s %d; stopping the others\n", r,
                       WIFEXITED(status) ? "exited with" : "was killed by signal",
                       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
          for (pid_t p : pids)
            if (p > 0) ::kill(p, SIGTERM);
        }
      }
      continue;
    }
    // A failed rank: the others get 30 s to notice and write what they can, then they go.
    if (failure && std::chrono::steady_clock::now() - failed_at > std::chrono::seconds(30))
      for (pid_t p : pids)
        if (p > 0) ::kill(p, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!rank0_done) return 1;
  if (WIFSIGNALED(rank0_status)) {
    // End the way rank 0 ended, so a supervisor sees the same crash.
    runtime::die_by_signal(WTERMSIG(rank0_status));
  }
  return WEXITSTATUS(rank0_status);
}

WS_VERB("launch", "run a training verb as N data-parallel ranks on this machine (like torchrun)", &run_launch);

}  // namespace ws::cli
