/*
 * The physical limit for WatchLink's link: length-prefixed frames between two processes
 * over an AF_UNIX stream socket, with nothing else on the path.
 *
 *   unix_frames rtt SIZE COUNT     round trips (the child echoes each frame); prints
 *                                  {"p50Us":..,"p99Us":..,"meanUs":..}
 *   unix_frames oneway SIZE COUNT  the parent writes COUNT frames, one write(2) each, the
 *                                  child reads them and answers one byte at the end;
 *                                  prints {"framesPerSecond":..}
 *   unix_frames rtt-epoll SIZE COUNT
 *                                  round trips to a child that waits in epoll_wait(2) and echoes
 *                                  what one read(2) of up to 64 KiB returns: the daemons' way of
 *                                  waiting and reading, with no work of theirs (the `rtt` child
 *                                  blocks in read(2), reading the length and then the payload)
 *   unix_frames rtt-evented SIZE COUNT
 *                                  as rtt-epoll, and the parent too waits in epoll_wait(2)
 *                                  before each read of up to 64 KiB: both daemons' system
 *                                  calls on a round trip, with no work of theirs
 *   unix_frames relay SIZE COUNT   round trips through a relay: the parent's frame goes to a
 *                                  process that waits in epoll_wait(2) and passes on what it
 *                                  reads to a third, which echoes it the same way; the
 *                                  control path's shape (client, phoned, watchd) with nothing
 *                                  else on it. Prints {"p50Us":..,"p99Us":..,"meanUs":..}
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void write_all(int fd, const unsigned char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) { if (errno == EINTR) continue; perror("write"); exit(1); }
        p += w; n -= (size_t)w;
    }
}

static int read_all(int fd, unsigned char *p, size_t n) {
    while (n > 0) {
        ssize_t r = read(fd, p, n);
        if (r < 0) { if (errno == EINTR) continue; perror("read"); exit(1); }
        if (r == 0) return 0;
        p += r; n -= (size_t)r;
    }
    return 1;
}

static int compare(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Prints the p50, p99 and mean of COUNT round trips (nanoseconds, sorted here) and frees them. */
static void print_latencies(uint64_t *lat, long count) {
    qsort(lat, (size_t)count, sizeof(uint64_t), compare);
    double sum = 0;
    for (long i = 0; i < count; i++) sum += (double)lat[i];
    printf("{\"p50Us\": %.3f, \"p99Us\": %.3f, \"meanUs\": %.3f}\n", lat[count / 2] / 1e3,
           lat[(long)(count * 0.99)] / 1e3, sum / count / 1e3);
    free(lat);
}

/* Sends the frame in `buf` COUNT times on `fd`, reading it back each time; prints the
 * round trips' p50, p99 and mean. */
static void round_trips(int fd, unsigned char *buf, size_t frame, long count) {
    uint64_t *lat = malloc(sizeof(uint64_t) * (size_t)count);
    for (long i = 0; i < count; i++) {
        uint64_t t0 = now_ns();
        write_all(fd, buf, frame);
        if (!read_all(fd, buf, frame)) { fprintf(stderr, "the other end closed\n"); exit(1); }
        lat[i] = now_ns() - t0;
    }
    print_latencies(lat, count);
}

/* As round_trips, waiting in epoll_wait before each read of what has come, as a daemon does. */
static void evented_round_trips(int fd, unsigned char *buf, size_t frame, long count) {
    int ep = epoll_create1(0);
    struct epoll_event event = {.events = EPOLLIN, .data.fd = fd}, ready;
    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &event);
    static unsigned char in[1 << 16];
    uint64_t *lat = malloc(sizeof(uint64_t) * (size_t)count);
    for (long i = 0; i < count; i++) {
        uint64_t t0 = now_ns();
        write_all(fd, buf, frame);
        for (size_t got = 0; got < frame;) {
            if (epoll_wait(ep, &ready, 1, -1) < 0) { if (errno == EINTR) continue; perror("epoll_wait"); exit(1); }
            ssize_t r = read(fd, in, sizeof in);
            if (r < 0) { if (errno == EINTR || errno == EAGAIN) continue; perror("read"); exit(1); }
            if (r == 0) { fprintf(stderr, "the other end closed\n"); exit(1); }
            got += (size_t)r;
        }
        lat[i] = now_ns() - t0;
    }
    print_latencies(lat, count);
    close(ep);
}

/* Waits in epoll_wait on `a` (and `b` when not -1); what arrives on `a` is written to `to_a`,
 * what arrives on `b` to `to_b`. Returns at the end of a stream. */
static void pass_on(int a, int to_a, int b, int to_b) {
    int ep = epoll_create1(0);
    struct epoll_event event = {.events = EPOLLIN};
    event.data.fd = a;
    epoll_ctl(ep, EPOLL_CTL_ADD, a, &event);
    if (b >= 0) {
        event.data.fd = b;
        epoll_ctl(ep, EPOLL_CTL_ADD, b, &event);
    }
    static unsigned char buffer[1 << 16];
    struct epoll_event ready[4];
    for (;;) {
        int n = epoll_wait(ep, ready, 4, -1);
        if (n < 0) { if (errno == EINTR) continue; perror("epoll_wait"); exit(1); }
        for (int i = 0; i < n; i++) {
            int fd = ready[i].data.fd;
            ssize_t r = read(fd, buffer, sizeof buffer);
            if (r < 0) { if (errno == EINTR || errno == EAGAIN) continue; perror("read"); exit(1); }
            if (r == 0) return;
            write_all(fd == a ? to_a : to_b, buffer, (size_t)r);
        }
    }
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: %s rtt|rtt-epoll|rtt-evented|oneway|relay SIZE COUNT\n", argv[0]); return 2; }
    int relay = strcmp(argv[1], "relay") == 0;
    int evented = strcmp(argv[1], "rtt-evented") == 0;
    int epoll_echo = evented || strcmp(argv[1], "rtt-epoll") == 0;
    int rtt = relay || epoll_echo || strcmp(argv[1], "rtt") == 0;
    size_t size = (size_t)atol(argv[2]);
    long count = atol(argv[3]);
    size_t frame = 4 + size;
    unsigned char *buf = calloc(1, frame);
    buf[0] = (unsigned char)(size >> 24); buf[1] = (unsigned char)(size >> 16);
    buf[2] = (unsigned char)(size >> 8); buf[3] = (unsigned char)size;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) { perror("socketpair"); return 1; }
    if (relay) {
        int link[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, link) != 0) { perror("socketpair"); return 1; }
        pid_t echo = fork();
        if (echo == 0) {
            close(sv[0]); close(sv[1]); close(link[0]);
            pass_on(link[1], link[1], -1, -1);
            _exit(0);
        }
        pid_t middle = fork();
        if (middle == 0) {
            close(sv[0]); close(link[1]);
            pass_on(sv[1], link[0], link[0], sv[1]);
            _exit(0);
        }
        close(sv[1]); close(link[0]); close(link[1]);
        round_trips(sv[0], buf, frame, count);
        close(sv[0]);
        waitpid(middle, NULL, 0);
        waitpid(echo, NULL, 0);
        return 0;
    }
    pid_t child = fork();
    if (child == 0) {
        close(sv[0]);
        if (epoll_echo) {
            pass_on(sv[1], sv[1], -1, -1);
            _exit(0);
        }
        unsigned char *in = malloc(frame);
        if (rtt) {
            while (read_all(sv[1], in, 4)) {
                size_t n = ((size_t)in[0] << 24) | ((size_t)in[1] << 16) | ((size_t)in[2] << 8) | in[3];
                if (!read_all(sv[1], in + 4, n)) break;
                write_all(sv[1], in, 4 + n);
            }
        } else {
            /* Parse the stream frame by frame, as a receiver must. */
            size_t cap = 1 << 20, have = 0, at = 0;
            unsigned char *stream = malloc(cap);
            long frames = 0;
            while (frames < count) {
                ssize_t r = read(sv[1], stream + have, cap - have);
                if (r <= 0) break;
                have += (size_t)r;
                while (have - at >= 4) {
                    size_t n = ((size_t)stream[at] << 24) | ((size_t)stream[at + 1] << 16) | ((size_t)stream[at + 2] << 8) | stream[at + 3];
                    if (have - at < 4 + n) break;
                    at += 4 + n;
                    frames++;
                }
                memmove(stream, stream + at, have - at);
                have -= at; at = 0;
            }
            unsigned char done = 1;
            write_all(sv[1], &done, 1);
        }
        _exit(0);
    }
    close(sv[1]);
    if (rtt) {
        if (evented) evented_round_trips(sv[0], buf, frame, count);
        else round_trips(sv[0], buf, frame, count);
    } else {
        uint64_t t0 = now_ns();
        for (long i = 0; i < count; i++) write_all(sv[0], buf, frame);
        unsigned char done;
        read_all(sv[0], &done, 1);
        double seconds = (now_ns() - t0) / 1e9;
        printf("{\"framesPerSecond\": %.1f}\n", count / seconds);
    }
    close(sv[0]);
    waitpid(child, NULL, 0);
    return 0;
}
