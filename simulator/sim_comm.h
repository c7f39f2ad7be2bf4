/*
 * sim_comm.h - collective and point-to-point times (sim_comm.c), NCCL's
 * ring algorithm by the alpha-beta model, and the link a group of ranks
 * runs over.  Beside sim_cost.h at the bottom of the simulator.
 */
#ifndef GPUPLAN_SIM_COMM_H
#define GPUPLAN_SIM_COMM_H

#include "sim.h"
#include "sim_const.h"

/* One link a collective group runs over. */
struct sim_link {
	double bytes_per_s;   /* achieved bus bandwidth per rank, one direction */
	double latency_s;     /* per ring step, averaged over the ring's steps */
};

/* The link a group of n ranks uses on cluster c when k of them share an
 * NVLink domain (k >= n: the whole group sits in one domain). */
void sim_group_link_k(const struct sim_cluster *c, int n, int k,
		      struct sim_link *out);
/* The same for ranks spaced stride apart in rank order (ranks fill
 * NVLink domains, sim_cluster_domain, in order). */
void sim_group_link(const struct sim_cluster *c, int n, int stride,
		    struct sim_link *out);
/* Ring all-reduce of bytes over n ranks: 2(n-1)/n of the buffer per rank. */
double sim_allreduce_s(double bytes, int n, const struct sim_link *l);
/* Ring reduce-scatter or all-gather of a bytes buffer: (n-1)/n of it. */
double sim_allgather_s(double bytes, int n, const struct sim_link *l);
/* One point-to-point send of bytes. */
double sim_p2p_s(double bytes, const struct sim_link *l);
/* One MoE dispatch (or combine) over an expert group of n ranks spaced
 * stride apart in rank order: each rank sends tokens tokens of
 * token_bytes, each to k experts spread evenly over the n ranks.  The
 * copies for ranks in the sender's NVLink domain go over NVLink, the
 * others over its share of the node's NIC, both at once.  Without flex
 * (NCCL's all-to-all, Megatron-Core's alltoall dispatcher) each copy
 * travels on its own; with flex (DeepEP, HybridEP: Megatron-Core's flex
 * dispatcher; DeepSeek-V3, sec. 3.2.2) a token crosses the network once
 * per NVLink domain holding one of its experts and fans out there, how
 * many by sim_route_reach with the router's groups (0: none). */
double sim_dispatch_s(const struct sim_cluster *c, double tokens, double token_bytes,
		      double k, int n, int stride, int flex, int groups, int group_topk);
/* The chance that one of `domains` NVLink domains of an expert group
 * holds at least one of a token's k experts, the experts spread evenly
 * and contiguously over the domains and routed uniformly at random:
 * 1 - (1 - 1/domains)^k.  With group-limited routing (groups > 0: the
 * experts in `groups` contiguous groups, each token's k experts taken
 * from the group_topk groups it picks; DeepSeek-V3's node-limited
 * routing, n_group 8 and topk_group 4, arXiv:2412.19437 sec. 2.1.2 and
 * 3.2.2) a token's experts crowd into fewer domains: with g whole
 * groups a domain, it holds j of the chosen ones with the
 * hypergeometric chance and misses all k with (1 - j/group_topk)^k; a
 * group over several domains is reached only when chosen.  Groups that
 * neither divide nor are divided by the domains read as no limit.  The
 * limit leaves the copies' spread over ranks as it was (each expert is
 * still chosen evenly), so only the flex dispatcher's one-per-domain
 * traffic falls. */
double sim_route_reach(double k, int domains, int groups, int group_topk);

#endif
