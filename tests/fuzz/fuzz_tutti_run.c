/* tutti-run's options and environment (tools/tutti-run.in) from arbitrary bytes: each line of
 * the input is an argument, or, as NAME=VALUE after "ENV ", a variable (Slurm's, Tutti's).
 * tutti-run runs with --dry-run first (it prints the launcher's command, starts nothing), a
 * PATH of its own (stand-ins for mpirun and srun beside the utilities it uses, made by
 * tests/fuzz/tutti-run-path.sh: FUZZ_TUTTI_PATH), and no '/' in what the input says, so that no program the input names
 * can run. It must end within 10 s with status 0 or 2, every line it writes to its error
 * output its own (no shell error: an unquoted value, a test of a number that is not one). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/fuzz/fuzz.h"

#define MAX_ARGS 16
#define MAX_ENV 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *run = getenv("FUZZ_TUTTI_RUN"), *path = getenv("FUZZ_TUTTI_PATH");
  const char *icd = getenv("TUTTI_ICD");
  if (!run || !path || !icd || size > 2048)
    return 0;
  char *text = fuzz_text(data, size);
  if (!text)
    return 0;
  for (size_t i = 0; i < size; i++)
    if (text[i] == '/')
      text[i] = '_';
  /* argv[0] the script's path: the shell's complaints then start with it, not "tutti-run: ". */
  char *argv[MAX_ARGS + 3] = {(char *)run, (char *)"--dry-run"};
  char *envp[MAX_ENV + 4];
  int argc = 2, envc = 0;
  char pathvar[4096], icdvar[4096];
  snprintf(pathvar, sizeof pathvar, "PATH=%s", path);
  snprintf(icdvar, sizeof icdvar, "TUTTI_ICD=%s", icd);
  envp[envc++] = pathvar;
  envp[envc++] = icdvar;
  envp[envc++] = (char *)"LC_ALL=C";
  for (char *line = text, *next; line && *line; line = next) {
    next = strchr(line, '\n');
    if (next)
      *next++ = 0;
    if (!strncmp(line, "ENV ", 4) && strchr(line + 4, '=') && line[4] != '=' && envc < MAX_ENV + 3)
      envp[envc++] = line + 4;
    else if (argc < MAX_ARGS + 2)
      argv[argc++] = line;
  }
  argv[argc] = NULL;
  envp[envc] = NULL;
  int err[2];
  if (pipe(err) != 0) {
    free(text);
    return 0;
  }
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    dup2(err[1], 2);
    close(err[0]);
    execve(run, argv, envp);
    _exit(127);
  }
  close(err[1]);
  char out[16384];
  size_t n = 0;
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  bool timed_out = false;
  for (;;) {
    struct pollfd p = {err[0], POLLIN, 0};
    int r = poll(&p, 1, 100);
    if (r > 0) {
      ssize_t got = read(err[0], out + n, sizeof out - 1 - n);
      if (got <= 0)
        break;
      n += (size_t)got;
      if (n == sizeof out - 1)
        break;
    }
    clock_gettime(CLOCK_MONOTONIC, &t);
    if (t.tv_sec - t0.tv_sec > 10) {
      timed_out = true;
      kill(pid, SIGKILL);
      break;
    }
  }
  out[n] = 0;
  close(err[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  char shown[sizeof out];
  memcpy(shown, out, n + 1);
  bool shell = false;
  /* Every line is tutti-run's own or its usage text. */
  for (char *l = out, *e; *l; l = e ? e + 1 : l + strlen(l)) {
    e = strchr(l, '\n');
    if (e)
      *e = 0;
    if (*l && strncmp(l, "tutti-run: ", 11) && strncmp(l, "Usage: ", 7) && l[0] != ' ' &&
        strncmp(l, "Runs program", 12) && strncmp(l, "Environment:", 12)) {
      fprintf(stderr, "not tutti-run's: %s\n", l);
      shell = true;
    }
    if (!e)
      break;
  }
  if (timed_out || shell || (code != 0 && code != 2))
    fprintf(stderr, "tutti-run exit %d%s; its errors:\n%s\n", code,
            timed_out ? " (timed out)" : "", shown);
  FUZZ_ASSERT(!timed_out && !shell && (code == 0 || code == 2));
  free(text);
  return 0;
}
