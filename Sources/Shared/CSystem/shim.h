#ifndef WATCHLINK_CSYSTEM_SHIM_H
#define WATCHLINK_CSYSTEM_SHIM_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>

#ifdef __linux__
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>

/*
 * GNU extensions, declared here rather than through _GNU_SOURCE: the Swift Glibc module
 * is built without it, and the same glibc headers compiled with and without it yield
 * conflicting definitions (fd_set, __rusage_who) when both modules are imported.
 */
extern int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);
extern int pipe2(int fds[2], int flags);
extern int posix_spawn_file_actions_addchdir_np(posix_spawn_file_actions_t *actions, const char *path);

/* struct ucred of <sys/socket.h> (GNU-only there), as filled in by SO_PEERCRED. */
struct wl_ucred {
    pid_t pid;
    uid_t uid;
    gid_t gid;
};
#endif

/* File type tests (macros in C, unreachable from Swift). */
static inline int wl_s_isdir(mode_t mode) { return S_ISDIR(mode); }
static inline int wl_s_isreg(mode_t mode) { return S_ISREG(mode); }
static inline int wl_s_issock(mode_t mode) { return S_ISSOCK(mode); }
static inline int wl_s_islnk(mode_t mode) { return S_ISLNK(mode); }

/* stat(2), whose name Swift also gives to the struct. */
static inline int wl_stat(const char *path, struct stat *info) { return stat(path, info); }

/* Signal sets: sigemptyset/sigaddset are macros on some platforms. */
static inline int wl_sigset_fill_from(sigset_t *set, const int *signals, int count) {
    sigemptyset(set);
    for (int i = 0; i < count; i++) {
        if (sigaddset(set, signals[i]) != 0) return -1;
    }
    return 0;
}

/* Installs `handler` for `signo` with SA_RESTART; the previous action goes to `old`. */
static inline int wl_sigaction_install(int signo, void (*handler)(int), struct sigaction *old) {
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_handler = handler;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    return sigaction(signo, &action, old);
}

static inline int wl_sigaction_restore(int signo, const struct sigaction *old) {
    return sigaction(signo, old, NULL);
}

static inline int wl_sigaction_ignore(int signo) {
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_handler = SIG_IGN;
    sigemptyset(&action.sa_mask);
    return sigaction(signo, &action, NULL);
}

/*
 * Starts `path` with `argv` and `envp` (NULL-terminated) as a child in a process group of its
 * own: standard input from /dev/null, standard output and error to `output_fd`, in `directory`
 * when it is not NULL, with no signal blocked and every signal at its default action (the
 * daemon blocks signals for signalfd and ignores SIGPIPE, and a child would inherit both).
 * Every other descriptor of the daemon is close-on-exec. The child's pid goes to `pid`;
 * returns 0, or the errno of the failure (an executable that cannot be run included).
 */
static inline int wl_spawn(const char *path, char *const argv[], char *const envp[], const char *directory,
                           int output_fd, pid_t *pid) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    int result = posix_spawn_file_actions_init(&actions);
    if (result != 0) return result;
    result = posix_spawnattr_init(&attributes);
    if (result != 0) {
        posix_spawn_file_actions_destroy(&actions);
        return result;
    }
    sigset_t none, defaults;
    sigemptyset(&none);
    sigfillset(&defaults);
    sigdelset(&defaults, SIGKILL);
    sigdelset(&defaults, SIGSTOP);
    result = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    if (result == 0) result = posix_spawn_file_actions_adddup2(&actions, output_fd, 1);
    if (result == 0) result = posix_spawn_file_actions_adddup2(&actions, output_fd, 2);
    if (result == 0 && directory != NULL) result = posix_spawn_file_actions_addchdir_np(&actions, directory);
    if (result == 0) result = posix_spawnattr_setsigmask(&attributes, &none);
    if (result == 0) result = posix_spawnattr_setsigdefault(&attributes, &defaults);
    if (result == 0) result = posix_spawnattr_setpgroup(&attributes, 0);
    if (result == 0) result = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
    if (result == 0) result = posix_spawn(pid, path, &actions, &attributes, argv, envp);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    return result;
}

/* waitpid(2)'s status macros. */
static inline int wl_wifexited(int status) { return WIFEXITED(status); }
static inline int wl_wexitstatus(int status) { return WEXITSTATUS(status); }
static inline int wl_wifsignaled(int status) { return WIFSIGNALED(status); }
static inline int wl_wtermsig(int status) { return WTERMSIG(status); }

/* Word-sized atomics usable from a signal handler. */
static inline int wl_atomic_load_int(const int *pointer) {
    return __atomic_load_n(pointer, __ATOMIC_SEQ_CST);
}

static inline void wl_atomic_store_int(int *pointer, int value) {
    __atomic_store_n(pointer, value, __ATOMIC_SEQ_CST);
}

/* errno, readable and writable without going through the Swift overlay. */
static inline int wl_errno(void) { return errno; }
static inline void wl_set_errno(int value) { errno = value; }

#endif
