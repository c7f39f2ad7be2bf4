/*
 * sim_assume.c - the figures a plan assumed because no one stated them
 * (struct sim_assumption): recorded once a field, so that a plan file and
 * simulate --json say what stderr said.  It calls only common/.
 */
#include <string.h>

#include "sim.h"

static int find(const struct sim_plan *p, const char *field)
{
	for (int i = 0; i < p->n_assumptions; i++)
		if (strcmp(p->assumptions[i].field, field) == 0)
			return i;
	return -1;
}

enum rc sim_plan_assume(struct sim_plan *p, const char *field, double value, const char *why)
{
	int i = find(p, field);
	struct sim_assumption *a;

	if (i < 0) {
		if (p->n_assumptions >= SIM_PLAN_MAX_ASSUMPTIONS)
			return RC_ERR;
		i = p->n_assumptions++;
	}
	a = &p->assumptions[i];
	gp_strlcpy(a->field, field, sizeof(a->field));
	a->value = value;
	gp_strlcpy(a->why, why, sizeof(a->why));
	return RC_OK;
}

void sim_plan_unassume(struct sim_plan *p, const char *field)
{
	int i = find(p, field);

	if (i < 0)
		return;
	memmove(&p->assumptions[i], &p->assumptions[i + 1],
		(size_t)(p->n_assumptions - i - 1) * sizeof(p->assumptions[0]));
	p->n_assumptions--;
}

const struct sim_assumption *sim_plan_assumption(const struct sim_plan *p, const char *field)
{
	int i = find(p, field);

	return i < 0 ? NULL : &p->assumptions[i];
}
