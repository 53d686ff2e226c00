/* Log output and error names. */
#include "config.h"

#include "runtime/base/log.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <ucontext.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>


static FILE *log_file;
static int log_rank;

void tt_log_set_rank(int rank)
{
  log_rank = rank;
}
static pthread_once_t log_once = PTHREAD_ONCE_INIT;

/* Under tutti-run's --output=rank0 the host layer sends other ranks' standard error to
 * /dev/null and keeps the real one for Tutti (host/preload_host.c). */
static void open_log(void)
{
  int (*shim_fd)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "tutti_shim_log_fd");
  int fd = shim_fd ? shim_fd() : -1;
  log_file = fd >= 0 ? fdopen(fd, "a") : NULL;
  if (log_file)
    setvbuf(log_file, NULL, _IONBF, 0);
  else
    log_file = stderr;
}

FILE *tt_log_file(void)
{
  pthread_once(&log_once, open_log);
  return log_file;
}

/* A crash prints where it happened (functions of libtutti are named; `addr2line -e
 * libtutti.so OFFSET` gives the line), once, then the process ends by the signal's default
 * action: a handler that was there before (Open MPI's) would print a second report of the
 * same crash. Under tutti-run the rank's status file says which signal ended it (the host
 * layer writes the status of a rank that exits: host/preload_host.c). */
static const int crash_sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
static atomic_flag reported = ATOMIC_FLAG_INIT;
static char status_path[4096]; /* TUTTI_OUTPUT_DIR/status.R, made before any crash */

/* The instruction that faulted, from the signal's context (the unwinder may not get past
 * the signal frame: then this is the one line that says where). */
static void *fault_pc(void *ucontext)
{
  ucontext_t *uc = ucontext;
#if defined(__x86_64__)
  return uc ? (void *)uc->uc_mcontext.gregs[REG_RIP] : NULL;
#elif defined(__aarch64__)
  return uc ? (void *)uc->uc_mcontext.pc : NULL;
#else
  (void)uc;
  return NULL;
#endif
}

/* The rank's status file says how it ended (async-signal-safe: open, write, close). */
static void write_status(const char *text, size_t len)
{
  if (!status_path[0])
    return;
  int sf = open(status_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (sf >= 0) {
    ssize_t w = write(sf, text, len);
    (void)w;
    close(sf);
  }
}

static void crashed(int sig, siginfo_t *info, void *ucontext)
{
  (void)info;
  if (!atomic_flag_test_and_set(&reported)) {
    char head[640];
    int fd = fileno(tt_log_file());
    int n = snprintf(head, sizeof head, "[tutti %d] crashed with signal %d; the stack:\n",
                     log_rank, sig);
    ssize_t w = write(fd, head, (size_t)n);
    void *pc = fault_pc(ucontext);
    Dl_info where;
    if (pc && dladdr(pc, &where) && where.dli_fname) {
      /* "addr2line -f -e LIB OFFSET" names the function and line, static ones too. */
      n = snprintf(head, sizeof head, "[tutti %d] at %s%s+%#lx (offset %#lx in %s; addr2line "
                   "-f -e %s %#lx)\n", log_rank, where.dli_sname ? where.dli_sname : "",
                   where.dli_sname ? " " : "",
                   (unsigned long)((char *)pc - (char *)(where.dli_saddr ? where.dli_saddr : where.dli_fbase)),
                   (unsigned long)((char *)pc - (char *)where.dli_fbase), where.dli_fname,
                   where.dli_fname, (unsigned long)((char *)pc - (char *)where.dli_fbase));
      w = write(fd, head, (size_t)(n < (int)sizeof head ? n : (int)sizeof head - 1));
    }
    void *frames[64];
    backtrace_symbols_fd(frames, backtrace(frames, 64), fd);
    n = snprintf(head, sizeof head, "signal %d\n", sig);
    write_status(head, (size_t)n);
    (void)w;
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

void tt_log_stopping_job(void)
{
  write_status("stopped\n", 8);
}

/* A hung rank tells where each of its threads is: SIGQUIT (`kill -QUIT PID`, where the
 * program left the signal at its default) prints every thread's stack on Tutti's log, one
 * thread after another, then ends the rank by the signal's default action (a debugger is not
 * always at hand on the nodes: doc/cluster.md, "A rank that hangs"). The thread the signal
 * reached asks each other thread in turn by a SIGQUIT of its own (tgkill), which this handler
 * answers with the stack of the thread it interrupted. Async-signal-safe but for backtrace,
 * as for crashes (libgcc loaded beforehand). */
static atomic_int quit_dumper; /* the thread printing the stacks, 0 before */
static atomic_int quit_answered; /* the last thread that printed its own */

static long thread_id(void)
{
  return syscall(SYS_gettid);
}

/* "[tutti R] thread TID (NAME):" and the calling thread's frames. */
static void print_own_stack(int fd, long tid)
{
  char path[64], name[32] = "?", head[160];
  snprintf(path, sizeof path, "/proc/self/task/%ld/comm", tid);
  int cf = open(path, O_RDONLY | O_CLOEXEC);
  if (cf >= 0) {
    ssize_t n = read(cf, name, sizeof name - 1);
    close(cf);
    name[n > 0 ? n : 0] = '\0';
    name[strcspn(name, "\n")] = '\0';
  }
  int n = snprintf(head, sizeof head, "[tutti %d] thread %ld (%s):\n", log_rank, tid, name);
  ssize_t w = write(fd, head, (size_t)n);
  (void)w;
  void *frames[64];
  int depth = backtrace(frames, 64);
  /* Not this function's frame nor the handler's: from the signal's trampoline on. */
  backtrace_symbols_fd(frames + 2, depth > 2 ? depth - 2 : 0, fd);
}

struct linux_dirent64 {
  unsigned long long d_ino;
  long long d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

static void quit_asked(int sig, siginfo_t *info, void *ucontext)
{
  (void)info;
  (void)ucontext;
  int fd = fileno(tt_log_file());
  long me = thread_id();
  int expected = 0;
  if (!atomic_compare_exchange_strong(&quit_dumper, &expected, (int)me)) {
    if (expected != (int)me) { /* asked by the thread printing the stacks */
      print_own_stack(fd, me);
      atomic_store(&quit_answered, (int)me);
    }
    return;
  }
  char head[160];
  int n = snprintf(head, sizeof head, "[tutti %d] SIGQUIT: the stack of each thread\n", log_rank);
  ssize_t w = write(fd, head, (size_t)n);
  (void)w;
  print_own_stack(fd, me);
  int dir = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  char buf[4096];
  long got;
  while (dir >= 0 && (got = syscall(SYS_getdents64, dir, buf, sizeof buf)) > 0) {
    for (long at = 0; at < got;) {
      struct linux_dirent64 *d = (struct linux_dirent64 *)(buf + at);
      at += d->d_reclen;
      long tid = atol(d->d_name);
      if (tid <= 0 || tid == me)
        continue;
      atomic_store(&quit_answered, 0);
      if (syscall(SYS_tgkill, (long)getpid(), tid, (long)sig) != 0)
        continue; /* it ended meanwhile */
      /* Up to a second: a thread that blocks the signal never answers. */
      for (int i = 0; i < 1000 && atomic_load(&quit_answered) != (int)tid; i++)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
      if (atomic_load(&quit_answered) != (int)tid) {
        n = snprintf(head, sizeof head, "[tutti %d] thread %ld: no answer (it blocks SIGQUIT)\n",
                     log_rank, tid);
        w = write(fd, head, (size_t)n);
      }
    }
  }
  if (dir >= 0)
    close(dir);
  n = snprintf(head, sizeof head, "signal %d\n", sig);
  write_status(head, (size_t)n);
  signal(sig, SIG_DFL);
  raise(sig);
}

static atomic_bool crash_handler_set;

void tt_log_crash_handler(void)
{
  atomic_store(&crash_handler_set, true);
  tt_log_file();
  void *warm[1];
  backtrace(warm, 1); /* loads libgcc now, not inside the handler */
  const char *dir = getenv("TUTTI_OUTPUT_DIR");
  const char *r = getenv("OMPI_COMM_WORLD_RANK");
  if (!r)
    r = getenv("PMI_RANK");
  if (!r)
    r = getenv("PMIX_RANK"); /* Open MPI's ranks started by srun --mpi=pmix */
  if (dir && *dir && r && !status_path[0])
    snprintf(status_path, sizeof status_path, "%s/status.%s", dir, r);
  /* Called again once drivers installed handlers of their own (they then run after Tutti's);
   * a signal whose handler is still Tutti's keeps it. */
  for (size_t i = 0; i < sizeof crash_sigs / sizeof crash_sigs[0]; i++) {
    struct sigaction now, sa;
    if (sigaction(crash_sigs[i], NULL, &now) == 0 && (now.sa_flags & SA_SIGINFO) &&
        now.sa_sigaction == crashed)
      continue;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = crashed;
    sa.sa_flags = SA_SIGINFO;
    sigaction(crash_sigs[i], &sa, NULL);
  }
  /* SIGQUIT where the program (or MPI) left it at its default when Tutti first came here;
   * then again from drivers that took it since (PoCL's LLVM takes it when loaded, and on
   * the signal merely hands it back). */
  static int quit_ours = -1; /* unknown, no, yes */
  struct sigaction now, sa;
  if (sigaction(SIGQUIT, NULL, &now) != 0)
    return;
  if (quit_ours < 0)
    quit_ours = !(now.sa_flags & SA_SIGINFO) && now.sa_handler == SIG_DFL;
  if (quit_ours && !((now.sa_flags & SA_SIGINFO) && now.sa_sigaction == quit_asked)) {
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = quit_asked;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigaction(SIGQUIT, &sa, NULL);
  }
}

void tt_log_crash_handler_again(void)
{
  if (atomic_load(&crash_handler_set))
    tt_log_crash_handler();
}

void tt_log_line(const char *file, int line, const char *fmt, ...)
{
  char buf[1024];
  const char *base = strrchr(file, '/');
  int n = snprintf(buf, sizeof buf, "[tutti %d %s:%d] ", log_rank, base ? base + 1 : file,
                   line);
  va_list ap;
  va_start(ap, fmt);
  if (n > 0 && (size_t)n < sizeof buf)
    vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
  va_end(ap);
  fprintf(tt_log_file(), "%s\n", buf);
}

const char *tt_error_name(cl_int err)
{
  switch (err) {
#define E(x) case x: return #x;
    E(CL_SUCCESS) E(CL_DEVICE_NOT_FOUND) E(CL_DEVICE_NOT_AVAILABLE) E(CL_COMPILER_NOT_AVAILABLE)
    E(CL_MEM_OBJECT_ALLOCATION_FAILURE) E(CL_OUT_OF_RESOURCES) E(CL_OUT_OF_HOST_MEMORY)
    E(CL_PROFILING_INFO_NOT_AVAILABLE) E(CL_MEM_COPY_OVERLAP) E(CL_IMAGE_FORMAT_MISMATCH)
    E(CL_IMAGE_FORMAT_NOT_SUPPORTED) E(CL_BUILD_PROGRAM_FAILURE) E(CL_MAP_FAILURE)
    E(CL_MISALIGNED_SUB_BUFFER_OFFSET) E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    E(CL_COMPILE_PROGRAM_FAILURE) E(CL_LINKER_NOT_AVAILABLE) E(CL_LINK_PROGRAM_FAILURE)
    E(CL_DEVICE_PARTITION_FAILED) E(CL_KERNEL_ARG_INFO_NOT_AVAILABLE) E(CL_INVALID_VALUE)
    E(CL_INVALID_DEVICE_TYPE) E(CL_INVALID_PLATFORM) E(CL_INVALID_DEVICE) E(CL_INVALID_CONTEXT)
    E(CL_INVALID_QUEUE_PROPERTIES) E(CL_INVALID_COMMAND_QUEUE) E(CL_INVALID_HOST_PTR)
    E(CL_INVALID_MEM_OBJECT) E(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR) E(CL_INVALID_IMAGE_SIZE)
    E(CL_INVALID_SAMPLER) E(CL_INVALID_BINARY) E(CL_INVALID_BUILD_OPTIONS) E(CL_INVALID_PROGRAM)
    E(CL_INVALID_PROGRAM_EXECUTABLE) E(CL_INVALID_KERNEL_NAME) E(CL_INVALID_KERNEL_DEFINITION)
    E(CL_INVALID_KERNEL) E(CL_INVALID_ARG_INDEX) E(CL_INVALID_ARG_VALUE) E(CL_INVALID_ARG_SIZE)
    E(CL_INVALID_KERNEL_ARGS) E(CL_INVALID_WORK_DIMENSION) E(CL_INVALID_WORK_GROUP_SIZE)
    E(CL_INVALID_WORK_ITEM_SIZE) E(CL_INVALID_GLOBAL_OFFSET) E(CL_INVALID_EVENT_WAIT_LIST)
    E(CL_INVALID_EVENT) E(CL_INVALID_OPERATION) E(CL_INVALID_GL_OBJECT) E(CL_INVALID_BUFFER_SIZE)
    E(CL_INVALID_MIP_LEVEL) E(CL_INVALID_GLOBAL_WORK_SIZE) E(CL_INVALID_PROPERTY)
    E(CL_INVALID_IMAGE_DESCRIPTOR) E(CL_INVALID_COMPILER_OPTIONS) E(CL_INVALID_LINKER_OPTIONS)
    E(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef E
  default:
    return "unknown error";
  }
}
