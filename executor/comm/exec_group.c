/*
 * exec_group.c - what a group is whichever communicator made it (MPI,
 * NCCL, or the self one of a single rank): releasing it, and releasing
 * the seven groups of a rank (struct exec_groups) in the reverse of the
 * order they are built.  Below every communicator, which call it to undo
 * a failed bring-up.
 */
#include <string.h>

#include "comm/exec_comm.h"

void exec_group_release(struct exec_group *g)
{
	if (g && g->comm && g->comm->release)
		g->comm->release(g);
	if (g)
		memset(g, 0, sizeof(*g));
}

void exec_groups_release(struct exec_groups *g)
{
	exec_group_release(&g->edp);
	exec_group_release(&g->ep);
	exec_group_release(&g->cp);
	exec_group_release(&g->dp);
	exec_group_release(&g->pp);
	exec_group_release(&g->tp);
	exec_group_release(&g->world);
}
