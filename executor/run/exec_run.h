/*
 * exec_run.h - what the files of the executor's top layer (executor/run/)
 * share beyond the public exec.h: the step watchdog and the pre-flight
 * check, which a run (exec_run.c) calls around the trainer's steps.
 *
 * Layers (tests/layers/test_layers.sh): common < pricing < simulator < planner <
 * executor (device < comm < train < run) < cli; a file includes and calls
 * only its own layer and those before it.  The run layer reads every
 * layer below it; the CLI reads it through exec.h and exec_metrics.h.
 */
#ifndef GPUPLAN_EXEC_RUN_H
#define GPUPLAN_EXEC_RUN_H

#include "train/exec_train.h"

/* ---- step watchdog and hang fault (exec_watchdog.c) -------------------- */

enum exec_watch_where { EXEC_WATCH_OWN_WORK, EXEC_WATCH_WAITING, EXEC_WATCH_IN_STEP };
/* Arms this rank's timer for step (nothing when timeout_s <= 0), starting
 * in its own work; when it fires, one line naming the rank, the step and
 * where it was goes to stderr and the process exits with status 1. */
void exec_watchdog_arm(double timeout_s, int rank, int step);
void exec_watchdog_where(enum exec_watch_where w);
void exec_watchdog_disarm(void);
/* Sleeps for ever when o makes rank hang at step (EXEC_FAULT_HANG_ENV). */
void exec_fault_hang(const struct exec_opts *o, int rank, int step);

/* ---- pre-flight check (exec_check.c) ----------------------------------- */

/* The pre-flight check of exec_opts.check (exec_check.c): the device
 * against expect.gpu, free memory against expect.memory_bytes, and an
 * all-reduce over each group of more than one rank against the bus
 * bandwidth the simulator assumed.  Fills out on every rank; returns
 * RC_OK, or RC_DEVICE (after one line from the lowest failing rank) when
 * a check fails.  The second half runs after step 1: device memory in use
 * against the prediction. */
enum rc exec_preflight(struct exec_job *j, const struct exec_opts *o, struct exec_check *out);
enum rc exec_preflight_after_step(struct exec_job *j, struct exec_check *out);

#endif
