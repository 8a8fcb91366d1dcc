/* run_beside.c - what runs beside a run.  See run_beside.h. */
#include "run_beside.h"
#include "run_early.h"
#include "run_exec.h"
#include "store.h"

void run_beside_init(struct run_beside *b)
{
	run_ahead_init(&b->ahead, b->sv, b->ctl);
}

void run_beside_free(struct run_beside *b)
{
	run_ahead_free(&b->ahead);
}

void run_beside_start(struct run_beside *b)
{
	if (b->sample) /* for the run's length at most */
		run_samplers_start(&b->samplers, b->sv, b->ch, b->sh, b->r, b->wall_s);
	run_latency_start(&b->lat, b->sv, b->ch, b->sh, b->r, b->load_s);  /* the spec's "latency", if any */
	run_profile_start(&b->prof, b->sv, b->ch, b->sh, b->r, b->wall_s); /* the spec's "profile", if any */
	b->started = true;
}

void run_beside_ahead(struct run_beside *b)
{
	run_early_kick(b->ctl, b->r->port); /* the next run's server, when the runner planned it */
	run_ahead_kick(&b->ahead);
}

void run_beside_stop(struct run_beside *b, bool read_profile, json_t **latency)
{
	run_ahead_join(&b->ahead); /* no kick after this */
	if (!b->started)
		return;
	run_profile_stop(&b->prof, read_profile);
	if (b->sample)
		run_samplers_stop(&b->samplers);
	run_latency_stop(&b->lat);
	*latency = b->lat.summary; /* kept with the run: its run.rtt events may go with the retention */
	b->lat.summary = NULL;
	b->started = false;
}
