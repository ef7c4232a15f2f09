/* A native backtrace on a fatal signal, for diagnosing crashes on the GPU
 * machine, which has no gdb: LD_PRELOAD=crash_trace.so python3 ...
 * Python's faulthandler prints only Python frames; this prints the native
 * ones as "module+offset (symbol+offset)", which `addr2line -f -C -e module
 * offset` turns into file:line. Then the signal takes its default action, so
 * the exit status is unchanged.
 *   gcc -shared -fPIC -O1 -o crash_trace.so crash_trace.c
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void on_fatal(int sig, siginfo_t* info, void* ctx) {
  (void)ctx;
  void* frames[64];
  int n = backtrace(frames, 64);
  char line[512];
  int len = snprintf(line, sizeof line, "crash_trace: signal %d (%s) at address %p, thread %ld\n", sig,
                     strsignal(sig), info ? info->si_addr : NULL, (long)gettid());
  write(2, line, (size_t)len);
  for (int i = 0; i < n; ++i) {
    Dl_info d;
    memset(&d, 0, sizeof d);
    if (dladdr(frames[i], &d) && d.dli_fname) {
      len = snprintf(line, sizeof line, "crash_trace: #%-2d %s+0x%lx (%s+0x%lx)\n", i, d.dli_fname,
                     (unsigned long)((char*)frames[i] - (char*)d.dli_fbase), d.dli_sname ? d.dli_sname : "?",
                     d.dli_saddr ? (unsigned long)((char*)frames[i] - (char*)d.dli_saddr) : 0UL);
    } else {
      len = snprintf(line, sizeof line, "crash_trace: #%-2d %p\n", i, frames[i]);
    }
    write(2, line, (size_t)len);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

__attribute__((constructor)) static void install(void) {
  static char alt[1 << 16];
  stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt, .ss_flags = 0};
  sigaltstack(&ss, NULL);
  void* warm[1];
  backtrace(warm, 1); /* loads libgcc's unwinder now, not inside the handler */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fatal;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
  for (unsigned i = 0; i < sizeof sigs / sizeof sigs[0]; ++i) sigaction(sigs[i], &sa, NULL);
}
