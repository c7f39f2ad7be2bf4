/*
 * sim_comm.c - collective and point-to-point times by the alpha-beta model
 * with NCCL's ring factors, and which link a group of ranks runs over.
 *
 * Bus-bandwidth conventions are those of nccl-tests' doc/PERFORMANCE.md:
 * a ring all-reduce moves 2(n-1)/n of the buffer through every rank's link,
 * reduce-scatter and all-gather (n-1)/n.  Latency is NCCL's own ring
 * model: a fixed time per ring step, longer for the steps that cross the
 * network.  An NVLink domain (a node, or a rack of nodes on one NVLink
 * switch fabric) joins its GPUs at the intra-node figure; the network
 * joins domains.  It does not model tree, NVLS or PAT algorithms, NCCL's
 * LL protocols for small messages, congestion between different groups'
 * traffic beyond sharing a node's NIC, or topology inside a domain
 * (NVSwitch is assumed to give every GPU its full link).  The flex
 * dispatcher's one copy per remote NVLink domain (DeepEP, HybridEP) and
 * node-limited routing (sim_route_reach) are modelled.
 *
 * Beside sim_cost.c at the bottom of the simulator: it calls no other
 * file of it.
 */
#include <math.h>

#include "sim_comm.h"

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

int sim_cluster_domain(const struct sim_cluster *c)
{
	int gpn = c->gpus_per_node > 0 ? c->gpus_per_node : 1;

	return c->nvlink_domain > gpn ? c->nvlink_domain : gpn;
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
		/* The ring leaves and re-enters each NVLink domain once; each
		 * GPU's share of its node's NIC carries its rings, so a ring
		 * with k ranks in a domain gets k shares there (of a node of
		 * gpn GPUs, the gpn / k rings that cross it at once share it). */
		double per_ring = inter * k / gpn;
		int domains = (n + k - 1) / k;

		if (per_ring < bw)
			bw = per_ring;
		/* NCCL's ring latency model (src/graph/tuning.cc): of the n - 1
		 * steps, one per domain crossed goes over the network, the rest
		 * over NVLink; here averaged per step. */
		out->latency_s = ((n - domains) * hop + (domains - 1) * SIM_NET_STEP_S) / (n - 1);
	}
	out->bytes_per_s = bw * SIM_LINK_EFF;
	if (c->latency_s > 0)
		out->latency_s = c->latency_s;
}

void sim_group_link(const struct sim_cluster *c, int n, int stride,
		    struct sim_link *out)
{
	int dom = sim_cluster_domain(c);
	int k;

	if (stride < 1)
		stride = 1;
	k = stride >= dom ? 1 : dom / stride;
	sim_group_link_k(c, n, k, out);
}

/* C(n, r) as a double, r small (a router's group top-k). */
static double choose(int n, int r)
{
	double v = 1;
	int i;

	if (r < 0 || r > n)
		return 0;
	for (i = 1; i <= r; i++)
		v = v * (n - r + i) / i;
	return v;
}

double sim_route_reach(double k, int domains, int groups, int group_topk)
{
	double miss = 0;
	int g, j;

	if (domains <= 1)
		return 1;
	if (groups <= 0 || group_topk <= 0 || group_topk >= groups ||
	    (groups % domains != 0 && domains % groups != 0))
		return 1.0 - pow(1.0 - 1.0 / domains, k);
	if (domains % groups == 0) {
		/* each group spans domains / groups domains: this one's
		 * group is chosen with group_topk / groups, and then each of
		 * the k experts, spread over the chosen groups' domains,
		 * lands here with groups / (group_topk x domains) */
		double in = (double)groups / ((double)group_topk * domains);

		return (double)group_topk / groups * (1.0 - pow(1.0 - in, k));
	}
	/* each domain holds g whole groups; j of them among the chosen
	 * (hypergeometric), and an expert lands in them with j / group_topk */
	g = groups / domains;
	for (j = 0; j <= g && j <= group_topk; j++)
		miss += choose(g, j) * choose(groups - g, group_topk - j) *
			pow(1.0 - (double)j / group_topk, k);
	return 1.0 - miss / choose(groups, group_topk);
}

double sim_dispatch_s(const struct sim_cluster *c, double tokens, double token_bytes,
		      double k, int n, int stride, int flex, int groups, int group_topk)
{
	int gpn = c->gpus_per_node > 0 ? c->gpus_per_node : 1;
	int dom = sim_cluster_domain(c), kd, domains;
	double inter = c->inter_bytes_per_s > 0 ? c->inter_bytes_per_s
						: SIM_DEFAULT_INTER_BYTES_PER_S;
	double hop = c->gpu.nvlink ? SIM_NVLINK_STEP_S : SIM_PCIE_STEP_S;
	double copies = tokens * k * token_bytes, near, far, lat;

	if (n <= 1 || !(copies > 0))
		return 0;
	if (stride < 1)
		stride = 1;
	/* kd of the n ranks share the sender's NVLink domain (itself among
	 * them); the group spans `domains` of them */
	kd = stride >= dom ? 1 : dom / stride;
	if (kd > n)
		kd = n;
	domains = (n + kd - 1) / kd;
	if (flex) {
		/* A token crosses the network once for each other domain that
		 * holds one of its k experts (sim_route_reach of each), then
		 * fans out over NVLink there; the copies for experts in its
		 * own domain go over NVLink. */
		far = tokens * token_bytes * (domains - 1) *
		      sim_route_reach(k, domains, groups, group_topk);
		near = copies * (kd - 1) / kd;
	} else {
		/* every copy travels on its own: the shares for the peers in
		 * the domain over NVLink, the others over the network */
		far = copies * (n - kd) / n;
		near = copies * (kd - 1) / n;
	}
	/* NCCL posts a send to every peer at once (grouped point-to-point);
	 * NVLink and the network move in parallel, the network through this
	 * GPU's 1/gpn of its node's NIC, as every GPU of the node sends at
	 * the same time. */
	near /= intra_bytes_per_s(c) * SIM_LINK_EFF;
	far /= inter / gpn * SIM_LINK_EFF;
	lat = domains > 1 ? SIM_NET_STEP_S : hop;
	if (c->latency_s > 0)
		lat = c->latency_s;
	return (near > far ? near : far) + lat;
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
