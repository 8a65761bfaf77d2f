/* The thread team the microbenchmarks share: n fresh pthreads, thread i pinned to the i-th CPU of
 * the process's affinity mask (so "all cores" means the CPUs we may use, e.g. under taskset or a
 * cgroup), and a join. Pinning is best effort: where sched_setaffinity is refused (some
 * containers) the threads simply run unpinned. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "ffnroof/measure.h"
#include "internal.h"

static int allowed_list(int *cpus, int cap)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
    int n = 0;
    for (int c = 0; c < CPU_SETSIZE && n < cap; c++)
        if (CPU_ISSET(c, &set)) cpus[n++] = c;
    return n;
}

int ffn__allowed_cpus(void)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
    const int n = CPU_COUNT(&set);
    return n > 0 ? n : 1;
}

/* Start gate: workers wait until every thread exists, so that a failed pthread_create can cancel
 * the run before any worker reaches a barrier sized for the full team. */
typedef struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int state; /* 0 wait, 1 go, -1 abort */
} gate;

typedef struct worker {
    gate *g;
    ffn__team_fn fn;
    void *arg;
    int tid, nthreads;
    int cpu; /* -1: do not pin */
} worker;

static void *worker_main(void *p)
{
    const worker *w = p;
    pthread_mutex_lock(&w->g->mu);
    while (w->g->state == 0)
        pthread_cond_wait(&w->g->cv, &w->g->mu);
    const int state = w->g->state;
    pthread_mutex_unlock(&w->g->mu);
    if (state < 0) return NULL;
    if (w->cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(w->cpu, &set);
        (void)sched_setaffinity(0, sizeof set, &set); /* 0 = this thread on Linux */
    }
    w->fn(w->arg, w->tid, w->nthreads);
    return NULL;
}

int ffn__team_run(int nthreads, ffn__team_fn fn, void *arg)
{
    if (nthreads < 1 || nthreads > 1024 || !fn) return FFN_EINVAL;
    int *cpus = malloc(CPU_SETSIZE * sizeof *cpus);
    worker *w = calloc((size_t)nthreads, sizeof *w);
    pthread_t *th = calloc((size_t)nthreads, sizeof *th);
    int rc = 0;
    if (!cpus || !w || !th) {
        rc = FFN_ENOMEM;
        goto done;
    }
    const int ncpu = allowed_list(cpus, CPU_SETSIZE);
    gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    int started = 0;
    for (int i = 0; i < nthreads; i++) {
        w[i] = (worker){&g, fn, arg, i, nthreads, ncpu > 0 ? cpus[i % ncpu] : -1};
        if (pthread_create(&th[i], NULL, worker_main, &w[i]) != 0) {
            rc = FFN_ENOMEM;
            break;
        }
        started++;
    }
    pthread_mutex_lock(&g.mu);
    g.state = rc == 0 ? 1 : -1;
    pthread_cond_broadcast(&g.cv);
    pthread_mutex_unlock(&g.mu);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
done:
    free(cpus);
    free(w);
    free(th);
    return rc;
}
