/*
 * Runs clickhouse-local from libchdb.so with the given command line and stays
 * in the foreground for as long as the query runs.
 *
 *   kb-chdb-launcher <path/to/libchdb.so> [clickhouse-local arguments...]
 *
 * clickhouse.sh passes a query that starts the HTTP listener
 * (SYSTEM START LISTEN HTTP) and then blocks, so the process serves HTTP until
 * it receives SIGTERM or SIGINT. The exit status is 0 when the query ends
 * without error, 1 when libchdb reports an error, 2 on a usage or load error.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef void *(*query_cmdline_fn)(int argc, char **argv);
typedef char *(*result_buffer_fn)(void *result);
typedef size_t (*result_length_fn)(void *result);
typedef const char *(*result_error_fn)(void *result);
typedef void (*destroy_result_fn)(void *result);

static void on_stop_signal(int sig) {
    (void)sig;
    static const char msg[] = "kb-chdb-launcher: stop signal received, exiting\n";
    ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)ignored;
    _exit(0);
}

static void *need_symbol(void *lib, const char *name) {
    void *sym = dlsym(lib, name);
    if (sym == NULL) {
        fprintf(stderr, "kb-chdb-launcher: symbol %s not found in libchdb: %s\n", name, dlerror());
        exit(2);
    }
    return sym;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s <path/to/libchdb.so> [clickhouse-local arguments...]\n", argv[0]);
        return 2;
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        fprintf(stderr, "kb-chdb-launcher: cannot load %s: %s\n", argv[1], dlerror());
        return 2;
    }

    query_cmdline_fn query_cmdline = (query_cmdline_fn)need_symbol(lib, "chdb_query_cmdline");
    result_buffer_fn result_buffer = (result_buffer_fn)need_symbol(lib, "chdb_result_buffer");
    result_length_fn result_length = (result_length_fn)need_symbol(lib, "chdb_result_length");
    result_error_fn result_error = (result_error_fn)need_symbol(lib, "chdb_result_error");
    destroy_result_fn destroy_result = (destroy_result_fn)need_symbol(lib, "chdb_destroy_query_result");

    /* clickhouse-local expects a program name in argv[0]. */
    int ch_argc = argc - 1;
    char **ch_argv = calloc((size_t)ch_argc + 1, sizeof(char *));
    if (ch_argv == NULL) {
        fprintf(stderr, "kb-chdb-launcher: out of memory\n");
        return 2;
    }
    ch_argv[0] = "clickhouse";
    for (int i = 2; i < argc; i++) ch_argv[i - 1] = argv[i];

    fprintf(stderr, "kb-chdb-launcher: starting clickhouse-local (pid %d)\n", (int)getpid());
    fflush(stderr);

    void *result = query_cmdline(ch_argc, ch_argv);
    if (result == NULL) {
        fprintf(stderr, "kb-chdb-launcher: chdb_query_cmdline returned no result\n");
        return 1;
    }
    int status = 0;
    const char *err = result_error(result);
    if (err != NULL && err[0] != '\0') {
        fprintf(stderr, "kb-chdb-launcher: clickhouse-local failed: %s\n", err);
        status = 1;
    } else {
        char *buf = result_buffer(result);
        size_t len = result_length(result);
        if (buf != NULL && len > 0) fwrite(buf, 1, len, stdout);
        fflush(stdout);
        fprintf(stderr, "kb-chdb-launcher: query finished\n");
    }
    destroy_result(result);
    free(ch_argv);
    return status;
}
