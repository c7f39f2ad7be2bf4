/*
 * sim_comm.c - collective and point-to-point times by the alpha-beta model
 * with NCCL's ring factors, and which link a group of ranks runs over.
 *
 * Bus-bandwidth conventions are those of nccl-tests' doc/PERFORMANCE.md:
 * a ring all-reduce moves 2(n-1)/n of the buffer through every rank's link,
 * reduce-scatter and all-gather (n-1)/n.  Latency is NCCL's own ring
 * model: a fixed time per ring step, longer for the steps that cross the
 * network.  It does not model tree, NVLS or PAT algorithms, NCCL's LL
 * protocols for small messages, congestion between different groups'
 * traffic beyond sharing a node's NIC, or topology inside a node
 * (NVSwitch is assumed to give every GPU its full link).
 */
#include "sim_internal.h"

/* Intra-node bandwidth per GPU, one direction: the cluster's figure, else
 * the GPU's, else a documented default by link kind.  A GPU with neither
 * NVLink nor peer-to-peer bounces every transfer through host memory,
 * crossing PCIe twice, so it gets half. */
static double intra_bytes_per_s(const struct sim_cluster *c)
{
	double bw = c->intra_bytes_per_s;

	if (bw <= 0)
		bw = c->gpu.intra_bytes_per_s;
	if (bw <= 0)
		bw = c->gpu.nvlink ? SIM_DEFAULT_NVLINK_BYTES_PER_S
				   : SIM_DEFAULT_PCIE_BYTES_PER_S;
	if (!c->gpu.nvlink && !c->gpu.p2p)
		bw *= 0.5;
	return bw;
}

void sim_group_link_k(const struct sim_cluster *c, int n, int k,
		      struct sim_link *out)
{
	int gpn = c->gpus_per_node > 0 ? c->gpus_per_node : 1;
	double intra = intra_bytes_per_s(c);
	double inter = c->inter_bytes_per_s > 0 ? c->inter_bytes_per_s
						: SIM_DEFAULT_INTER_BYTES_PER_S;
	double bw = intra;
	double hop = c->gpu.nvlink ? SIM_NVLINK_STEP_S : SIM_PCIE_STEP_S;

	if (k < 1)
		k = 1;
	out->latency_s = hop;
	if (n > k) {
		/* The ring leaves and re-enters each node once; the node's NIC
		 * is shared by the gpn / k rings that cross it at the same time,
		 * k being how many of one group's ranks share a node. */
		double per_ring = inter * k / gpn;
		int nodes = (n + k - 1) / k;

		if (per_ring < bw)
			bw = per_ring;
		/* NCCL's ring latency model (src/graph/tuning.cc): of the n - 1
		 * steps, nodes - 1 cross the network, the rest a node's own
		 * link; here averaged per step. */
		out->latency_s = ((n - nodes) * hop + (nodes - 1) * SIM_NET_STEP_S) / (n - 1);
	}
	out->bytes_per_s = bw * SIM_LINK_EFF;
	if (c->latency_s > 0)
		out->latency_s = c->latency_s;
}

void sim_group_link(const struct sim_cluster *c, int n, int stride,
		    struct sim_link *out)
{
	int gpn = c->gpus_per_node > 0 ? c->gpus_per_node : 1;
	int k;

	if (stride < 1)
		stride = 1;
	k = stride >= gpn ? 1 : gpn / stride;
	sim_group_link_k(c, n, k, out);
}

double sim_allreduce_s(double bytes, int n, const struct sim_link *l)
{
	if (n <= 1 || bytes <= 0)
		return 0;
	return 2.0 * (n - 1) / n * bytes / l->bytes_per_s + 2.0 * (n - 1) * l->latency_s;
}

double sim_allgather_s(double bytes, int n, const struct sim_link *l)
{
	if (n <= 1 || bytes <= 0)
		return 0;
	return (double)(n - 1) / n * bytes / l->bytes_per_s + (n - 1) * l->latency_s;
}

double sim_p2p_s(double bytes, const struct sim_link *l)
{
	if (bytes <= 0)
		return 0;
	return bytes / l->bytes_per_s + l->latency_s;
}
