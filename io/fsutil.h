/* Files that appear whole or not at all: write to a temporary name in the same directory, then
 * rename over the final name (rename(2) is atomic within one file system). Temporary files are
 * created with O_EXCL | O_NOFOLLOW under names nobody can predict, so that a symbolic link or file
 * planted in a shared output folder is never opened, followed or truncated. */
#ifndef MR_FSUTIL_H
#define MR_FSUTIL_H

#include <stddef.h>
#include <stdio.h>

#include "../base/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tmp := "<dir of final>/.<basename of final>.tmp<pid>.<12 random hex digits>", a new name at every
 * call. Only names a file: create it with mr_create_tmp, or let another writer create it through its
 * own temporary file and rename (recon/cli/cmd_convert.c's staged outputs). */
mr_status mr_tmp_name(const char *final_path, char *tmp, size_t tmp_size);

/* Create a new temporary file for final_path (mr_tmp_name; O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW,
 * mode 0666 less the umask), another name when one exists already; *fd (owned by the caller) and its
 * name in tmp. MR_EIO naming final_path and strerror when the folder refuses. */
mr_status mr_create_tmp(const char *final_path, char *tmp, size_t tmp_size, int *fd);

/* rename(tmp, final); on failure removes tmp and returns MR_EIO with a message. */
mr_status mr_commit_file(const char *tmp, const char *final_path);

/* Open a new temporary file for `final_path` for writing ("wb", mr_create_tmp); fills tmp with its name. */
mr_status mr_open_tmp(const char *final_path, char *tmp, size_t tmp_size, FILE **out);

/* Flush, fsync and fclose f, then commit tmp to final_path; on any error (e.g. a full disk: the
 * message names final_path and strerror) removes tmp, so final_path is either complete or untouched. */
mr_status mr_close_commit(FILE *f, const char *tmp, const char *final_path);

/* Write size bytes to final_path through a temporary file (write, fsync, close, rename); on any
 * error the temporary file is removed and the message names final_path and strerror. */
mr_status mr_write_file(const char *final_path, const void *data, size_t size);

/* Open an input file for reading as a descriptor of this process (*fd, O_CLOEXEC, owned by the caller):
 * without blocking (a FIFO), a regular file only. What is read through it stays this file, whatever
 * happens to the path afterwards (a rename over it). MR_EIO "path: cannot open: <strerror>" or
 * "path: not a regular file". */
mr_status mr_file_open_private(const char *path, int *fd);

/* mkdir -p */
mr_status mr_mkdir_p(const char *dir);
/* mkdir -p, and created[0..size) receives the outermost folder it made ("" when all existed), so that
 * a caller can take back what it made. */
mr_status mr_mkdir_p_created(const char *dir, char *created, size_t size);
/* The same with the mode of the folders it makes (0777: what the umask allows; 0700: private whatever
 * the umask, e.g. the Q cache's). Folders that exist keep their mode. */
mr_status mr_mkdir_p_mode(const char *dir, unsigned mode, char *created, size_t size);

/* rm -r path without following symbolic links; 0 when it is gone (or was never there), -1 (errno
 * set) when something could not be removed. */
int mr_remove_tree(const char *path);

/* 1 when path is a regular file (links followed), else 0. */
int mr_is_regular_file(const char *path);

/* 1 when path is a regular file whose bytes at offset are the n bytes of magic, else 0 (unreadable, short). */
int mr_file_starts_with(const char *path, long offset, const void *magic, size_t n);

/* Join "dir/name" into buf; MR_EINVAL if it does not fit. */
mr_status mr_path_join(char *buf, size_t size, const char *dir, const char *name);

#ifdef __cplusplus
}
#endif
#endif
