/*
 * The user's path through WatchLink: a minimal client of a daemon's control socket (JSON lines,
 * docs/control-protocol.md), as a test or a tool would drive it, with no work of its own but
 * writing requests and finding the end of each answer.
 *
 *   control_client rtt SOCKET SIZE COUNT
 *       COUNT `message.send` (wantsReply) of a 10-key dictionary of strings whose binary
 *       property list is about SIZE bytes (the benchmark's dictionary), one at a time on one
 *       connection; prints {"p50Us":..,"p99Us":..,"requestBytes":..}
 *   control_client userinfo SOCKET SIZE COUNT
 *       COUNT `userInfo.transfer` of a 10-key dictionary, pipelined on one connection (every
 *       request written as fast as the socket takes it, answers read as they come); then
 *       `status` until `outstandingUserInfoTransfers` is 0 (every transfer acknowledged by
 *       the other side, durably); prints {"acceptedPerSecond":..,"endToEndPerSecond":..}
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int connect_to(const char *path) {
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    if (fd < 0 || strlen(path) >= sizeof address.sun_path) { fprintf(stderr, "bad socket %s\n", path); exit(1); }
    strcpy(address.sun_path, path);
    if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) { perror(path); exit(1); }
    return fd;
}

static void write_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) { if (errno == EINTR) continue; perror("write"); exit(1); }
        p += w; n -= (size_t)w;
    }
}

/* Answers arrive as lines; a buffer keeps what follows the last complete one. */
static char input[1 << 20];
static size_t input_used;

/* Reads once; calls `line` for each complete answer. */
static void read_answers(int fd, void (*line)(const char *, size_t)) {
    ssize_t r = read(fd, input + input_used, sizeof input - input_used);
    if (r < 0) { if (errno == EINTR || errno == EAGAIN) return; perror("read"); exit(1); }
    if (r == 0) { fprintf(stderr, "the daemon closed the connection\n"); exit(1); }
    input_used += (size_t)r;
    size_t start = 0;
    for (size_t i = input_used - (size_t)r; i < input_used; i++) {
        if (input[i] != '\n') continue;
        line(input + start, i - start);
        start = i + 1;
    }
    memmove(input, input + start, input_used - start);
    input_used -= start;
    if (input_used == sizeof input) { fprintf(stderr, "an answer longer than %zu bytes\n", sizeof input); exit(1); }
}

static void require_ok(const char *text, size_t length) {
    if (memmem(text, length, "\"ok\":true", 9) == NULL) {
        fprintf(stderr, "the daemon refused a request: %.*s\n", (int)(length > 400 ? 400 : length), text);
        exit(1);
    }
}

/* The benchmark's dictionary (BenchFeature.dictionary): keys k0...k9, each with its own letter. */
static size_t dictionary_json(char *out, size_t size) {
    size_t value_length = size > 80 ? (size - 70) / 10 : 1;
    size_t n = 0;
    out[n++] = '{';
    for (int key = 0; key < 10; key++) {
        n += (size_t)sprintf(out + n, "%s\"k%d\":\"", key ? "," : "", key);
        memset(out + n, 'a' + key, value_length);
        n += value_length;
        out[n++] = '"';
    }
    out[n++] = '}';
    return n;
}

static size_t answers;
static void count_answer(const char *text, size_t length) { require_ok(text, length); answers++; }

static int compare(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void round_trips(const char *path, size_t size, size_t count) {
    int fd = connect_to(path);
    char *request = malloc(64 + 2 * size + 200);
    char *dictionary = malloc(2 * size + 200);
    size_t dictionary_length = dictionary_json(dictionary, size);
    uint64_t *samples = malloc(count * sizeof *samples);
    size_t length = 0;
    for (size_t i = 0; i < count; i++) {
        length = (size_t)sprintf(request, "{\"id\":%zu,\"op\":\"message.send\",\"args\":{\"wantsReply\":true,\"message\":", i);
        memcpy(request + length, dictionary, dictionary_length);
        length += dictionary_length;
        memcpy(request + length, "}}\n", 3);
        length += 3;
        size_t before = answers;
        uint64_t start = now_ns();
        write_all(fd, request, length);
        while (answers == before) read_answers(fd, count_answer);
        samples[i] = now_ns() - start;
    }
    qsort(samples, count, sizeof *samples, compare);
    printf("{\"p50Us\":%.2f,\"p99Us\":%.2f,\"requestBytes\":%zu}\n", samples[count / 2] / 1000.0,
           samples[count * 99 / 100] / 1000.0, length);
    close(fd);
}

static int outstanding = -1;
static void read_status(const char *text, size_t length) {
    require_ok(text, length);
    const char *field = memmem(text, length, "\"outstandingUserInfoTransfers\":", 31);
    if (field) outstanding = atoi(field + 31);
    answers++;
}

static void user_info(const char *path, size_t size, size_t count) {
    int fd = connect_to(path);
    char *dictionary = malloc(2 * size + 200);
    size_t dictionary_length = dictionary_json(dictionary, size);
    char *request = malloc(64 + dictionary_length + 64);
    size_t sent = 0, offset = 0, length = 0;
    uint64_t start = now_ns();
    while (answers < count) {
        struct pollfd p = {.fd = fd, .events = POLLIN | (sent < count ? POLLOUT : 0)};
        if (poll(&p, 1, -1) < 0) { if (errno == EINTR) continue; perror("poll"); exit(1); }
        if (p.revents & POLLIN) read_answers(fd, count_answer);
        while ((p.revents & POLLOUT) && sent < count) {
            if (offset == length) {
                length = (size_t)sprintf(request, "{\"id\":%zu,\"op\":\"userInfo.transfer\",\"args\":{\"userInfo\":", sent);
                memcpy(request + length, dictionary, dictionary_length);
                length += dictionary_length;
                memcpy(request + length, "}}\n", 3);
                length += 3;
                offset = 0;
            }
            ssize_t w = send(fd, request + offset, length - offset, MSG_DONTWAIT);
            if (w < 0) { if (errno == EAGAIN || errno == EINTR) break; perror("send"); exit(1); }
            offset += (size_t)w;
            if (offset == length) sent++;
        }
    }
    uint64_t accepted = now_ns();
    while (outstanding != 0) {
        const char *status = "{\"id\":0,\"op\":\"status\"}\n";
        size_t before = answers;
        write_all(fd, status, strlen(status));
        while (answers == before) read_answers(fd, read_status);
        if (outstanding != 0) usleep(200);
    }
    uint64_t delivered = now_ns();
    printf("{\"acceptedPerSecond\":%.1f,\"endToEndPerSecond\":%.1f}\n", count / ((accepted - start) / 1e9),
           count / ((delivered - start) / 1e9));
    close(fd);
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: control_client rtt|userinfo SOCKET SIZE COUNT\n");
        return 2;
    }
    size_t size = strtoul(argv[3], NULL, 10), count = strtoul(argv[4], NULL, 10);
    if (count == 0) return 2;
    if (strcmp(argv[1], "rtt") == 0) round_trips(argv[2], size, count);
    else if (strcmp(argv[1], "userinfo") == 0) user_info(argv[2], size, count);
    else { fprintf(stderr, "unknown mode %s\n", argv[1]); return 2; }
    return 0;
}
