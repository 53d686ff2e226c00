/* Where a program's main thread spends its time, blocked or not: a library to preload
 * (LD_PRELOAD) that samples the call stack of the thread that loaded it every SAMPLER_US
 * microseconds of wall-clock time (default 200) and, at exit, writes each sample as a line of
 * "module@offset" frames to SAMPLER_DIR/samples.PID; tools/sampler-report.py names the frames
 * and counts the stacks (doc/cluster.md, "Where a host thread spends its time"). Without
 * SAMPLER_DIR it does nothing, so that mpirun and other processes of a job are left alone.
 * Build: make tools/sampler.so. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { MAX_SAMPLES = 200000, DEPTH = 32 };

static void *frames[MAX_SAMPLES][DEPTH];
static unsigned char depth[MAX_SAMPLES];
static volatile sig_atomic_t nsamples;
static timer_t timer;
static int armed;

/* The signal arrives on the sampled thread only (SIGEV_THREAD_ID): no other writer. */
static void take(int sig, siginfo_t *info, void *ctx)
{
  (void)sig, (void)info, (void)ctx;
  int k = nsamples;
  if (k >= MAX_SAMPLES)
    return;
  depth[k] = (unsigned char)backtrace(frames[k], DEPTH);
  nsamples = k + 1;
}

__attribute__((constructor)) static void start(void)
{
  if (!getenv("SAMPLER_DIR"))
    return;
  /* backtrace loads the unwinder on its first call: not inside a signal handler. */
  void *warm[2];
  backtrace(warm, 2);
  long us = getenv("SAMPLER_US") ? atol(getenv("SAMPLER_US")) : 200;
  if (us < 10)
    us = 10;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = take;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  int sig = SIGRTMIN + 3;
  if (sigaction(sig, &sa, NULL) != 0)
    return;
  struct sigevent ev;
  memset(&ev, 0, sizeof ev);
  ev.sigev_notify = SIGEV_THREAD_ID;
  ev.sigev_signo = sig;
  ev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
  if (timer_create(CLOCK_MONOTONIC, &ev, &timer) != 0)
    return;
  struct itimerspec every = {{us / 1000000, us % 1000000 * 1000}, {us / 1000000, us % 1000000 * 1000}};
  armed = timer_settime(timer, 0, &every, NULL) == 0;
}

__attribute__((destructor)) static void stop(void)
{
  const char *dir = getenv("SAMPLER_DIR");
  if (!armed || !dir)
    return;
  timer_delete(timer);
  armed = 0;
  char path[4096];
  snprintf(path, sizeof path, "%s/samples.%d", dir, (int)getpid());
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "sampler: cannot write %s: %m\n", path);
    return;
  }
  for (int k = 0; k < nsamples; k++) {
    /* Frame 0 is the handler's and frame 1 the signal's return into the kernel; frame 2 is
     * where the thread was, the others are return addresses, which point past their call:
     * one byte back names the call's line. */
    for (int j = 2; j < depth[k]; j++) {
      Dl_info di;
      const char *at = (const char *)frames[k][j] - (j > 2);
      if (dladdr(at, &di) && di.dli_fname) {
        const char *base = strrchr(di.dli_fname, '/');
        fprintf(f, "%s@%lx ", base ? base + 1 : di.dli_fname,
                (unsigned long)(at - (const char *)di.dli_fbase));
      } else {
        fprintf(f, "?@%lx ", (unsigned long)at);
      }
    }
    fputc('\n', f);
  }
  fclose(f);
}
