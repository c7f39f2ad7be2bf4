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
 * per NVLink domain holding one of its experts and fans out there. */
double sim_dispatch_s(const struct sim_cluster *c, double tokens, double token_bytes,
		      double k, int n, int stride, int flex);

#endif
