/*
 * The reference for durable transfers: SQLite WAL commits with synchronous=FULL on the
 * same disk as WatchLink's databases.
 *   sqlite_commits DIR COUNT ROWS_PER_COMMIT   prints {"commitsPerSecond":..,"rowsPerSecond":..}
 */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: %s DIR COUNT ROWS_PER_COMMIT\n", argv[0]); return 2; }
    char path[4096];
    snprintf(path, sizeof path, "%s/reference-%d.db", argv[1], (int)getpid());
    long count = atol(argv[2]), per = atol(argv[3]);
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK) { fprintf(stderr, "open failed\n"); return 1; }
    sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
                     "CREATE TABLE outbox(seq INTEGER PRIMARY KEY, payload BLOB)", 0, 0, 0);
    sqlite3_stmt *insert;
    sqlite3_prepare_v2(db, "INSERT INTO outbox(seq, payload) VALUES (?, ?)", -1, &insert, 0);
    unsigned char payload[100] = {0};
    long commits = count / per;
    double t0 = now_s();
    long seq = 0;
    for (long c = 0; c < commits; c++) {
        sqlite3_exec(db, "BEGIN IMMEDIATE", 0, 0, 0);
        for (long r = 0; r < per; r++) {
            sqlite3_bind_int64(insert, 1, ++seq);
            sqlite3_bind_blob(insert, 2, payload, sizeof payload, SQLITE_STATIC);
            if (sqlite3_step(insert) != SQLITE_DONE) { fprintf(stderr, "insert failed\n"); return 1; }
            sqlite3_reset(insert);
        }
        if (sqlite3_exec(db, "COMMIT", 0, 0, 0) != SQLITE_OK) { fprintf(stderr, "commit failed\n"); return 1; }
    }
    double seconds = now_s() - t0;
    sqlite3_finalize(insert);
    sqlite3_close(db);
    unlink(path);
    char extra[4200];
    snprintf(extra, sizeof extra, "%s-wal", path); unlink(extra);
    snprintf(extra, sizeof extra, "%s-shm", path); unlink(extra);
    printf("{\"commitsPerSecond\": %.1f, \"rowsPerSecond\": %.1f}\n", commits / seconds, commits * per / seconds);
    return 0;
}
