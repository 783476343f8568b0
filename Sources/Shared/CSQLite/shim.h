#ifndef WATCHLINK_CSQLITE_SHIM_H
#define WATCHLINK_CSQLITE_SHIM_H
#include <sqlite3.h>
#include <stddef.h>

/// SQLITE_TRANSIENT is a cast of -1 to a function pointer, which Swift cannot import.
static inline sqlite3_destructor_type wl_sqlite3_transient(void) {
    return SQLITE_TRANSIENT;
}

/// The errno that the VFS recorded for the last failed system call on the WAL or rollback
/// journal of the main database, else on the main database file; 0 if none.
/// sqlite3_system_errno() stays 0 for some failures, such as a failed write at COMMIT.
static inline int wl_sqlite3_file_errno(sqlite3 *db) {
    int code = 0;
    sqlite3_file *journal = NULL;
    if (sqlite3_file_control(db, "main", SQLITE_FCNTL_JOURNAL_POINTER, &journal) == SQLITE_OK
        && journal != NULL && journal->pMethods != NULL
        && journal->pMethods->xFileControl(journal, SQLITE_FCNTL_LAST_ERRNO, &code) == SQLITE_OK
        && code != 0) {
        return code;
    }
    code = 0;
    if (sqlite3_file_control(db, "main", SQLITE_FCNTL_LAST_ERRNO, &code) != SQLITE_OK) {
        return 0;
    }
    return code;
}
#endif
