/*
 * test_cost.c - the cost models beyond the hourly rate: owning a machine
 * (amortisation over busy hours, power with PUE), checkpoint storage, the
 * hours a commitment bills, finding a commitment discount, the shipped
 * commitments.csv and hardware.csv and their bad-input errors, pricing a
 * candidate with each purchase option, the owned offering, and the
 * planner choosing a reserved column only when the job is long enough (or
 * carries a small enough share of the term).  Every expected figure is
 * worked out by hand in the comment above its assertion.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plan.h"
#include "plan_internal.h"

#define HOUR 3600.0
#define YEAR_S (8760.0 * HOUR)

/* ---- owning ------------------------------------------------------------- */

static void machine_init(struct price_hardware *h, struct price_gpu *g)
{
	memset(h, 0, sizeof(*h));
	memset(g, 0, sizeof(*g));
	snprintf(g->name, sizeof(g->name), "H100-SXM5-80GB");
	g->tdp_w = 700;
	snprintf(h->name, sizeof(h->name), "box");
	snprintf(h->gpu, sizeof(h->gpu), "H100-SXM5-80GB");
	h->gpus = 8;
	h->price_usd = 300000;
	h->host_power_w = 4600;
}

static void test_price_owned_cost_amortisation(void **state)
{
	struct price_hardware h;
	struct price_gpu g;
	struct price_owned_opts o;
	struct price_owned_cost c;

	(void)state;
	machine_init(&h, &g);
	price_owned_opts_init(&o);
	assert_near(o.amortisation_years, 3, 0);
	assert_near(o.utilisation, 0.7, 0);
	assert_int_equal(price_owned_cost(&h, &g, &o, &c), 0);
	/* 300000 USD over 3 y x 8760 h x 0.7 busy = 18396 h of use:
	 * 300000 / 18396 = 16.307893 USD/h, 2.0384866 per GPU-hour. */
	assert_near(c.capex_usd_per_hour, 16.307893, 1e-6);
	assert_near(c.capex_usd_per_gpu_hour, 2.0384866, 1e-6);
	/* Busy all the time, over 5 years: 300000 / 43800 = 6.849315 USD/h. */
	o.amortisation_years = 5;
	o.utilisation = 1;
	price_owned_cost(&h, &g, &o, &c);
	assert_near(c.capex_usd_per_hour, 6.849315, 1e-6);
}

static void test_price_owned_cost_power_pue(void **state)
{
	struct price_hardware h;
	struct price_gpu g;
	struct price_owned_opts o;
	struct price_owned_cost c;

	(void)state;
	machine_init(&h, &g);
	price_owned_opts_init(&o);
	price_owned_cost(&h, &g, &o, &c);
	/* 8 x 700 W + 4600 W host = 10200 W; 10.2 kW x PUE 1.2 x 0.15 USD/kWh
	 * = 1.836 USD/h, 0.2295 per GPU-hour; total 16.307893 + 1.836. */
	assert_near(c.power_w, 10200, 0);
	assert_near(c.power_usd_per_hour, 1.836, 1e-12);
	assert_near(c.power_usd_per_gpu_hour, 0.2295, 1e-12);
	assert_near(c.usd_per_hour, 18.143893, 1e-6);
	assert_near(c.usd_per_gpu_hour, c.capex_usd_per_gpu_hour + c.power_usd_per_gpu_hour, 1e-12);
	/* PUE 1.5 at 0.10 USD/kWh: 10.2 x 1.5 x 0.10 = 1.53 USD/h. */
	o.pue = 1.5;
	o.usd_per_kwh = 0.10;
	price_owned_cost(&h, &g, &o, &c);
	assert_near(c.power_usd_per_hour, 1.53, 1e-12);
	/* No TDP figure: the power cost is unknown, not zero. */
	g.tdp_w = 0;
	assert_int_equal(price_owned_cost(&h, &g, &o, &c), -1);
}

static void test_price_owned_opts_check_rejects(void **state)
{
	struct price_owned_opts o;
	char why[160];

	(void)state;
	price_owned_opts_init(&o);
	assert_int_equal(price_owned_opts_check(&o, why, sizeof(why)), RC_OK);
	o.pue = 0.9;
	assert_int_equal(price_owned_opts_check(&o, why, sizeof(why)), RC_USAGE);
	assert_non_null(strstr(why, "pue"));
	price_owned_opts_init(&o);
	o.utilisation = 0;
	assert_int_equal(price_owned_opts_check(&o, why, sizeof(why)), RC_USAGE);
	price_owned_opts_init(&o);
	o.amortisation_years = -1;
	assert_int_equal(price_owned_opts_check(&o, why, sizeof(why)), RC_USAGE);
}

/* ---- storage and commitment billing --------------------------------------- */

static void test_plan_storage_cost_usd(void **state)
{
	(void)state;
	/* An 8e9-parameter model: 8e9 x 14 B = 112 GB a checkpoint.  Two kept
	 * for one 730-hour month at 0.023 USD/GB-month: 2 x 112 x 0.023 =
	 * 5.152 USD; half a month 2.576; none kept 0. */
	assert_near(plan_storage_cost_usd(112e9, 2, 0.023, 730 * HOUR), 5.152, 1e-12);
	assert_near(plan_storage_cost_usd(112e9, 2, 0.023, 365 * HOUR), 2.576, 1e-12);
	assert_near(plan_storage_cost_usd(112e9, 0, 0.023, 730 * HOUR), 0, 0);
}

static void test_plan_reserved_charged_s(void **state)
{
	double t = 2400 * HOUR;  /* a 100-day job */

	(void)state;
	/* Whole 1-year term charged: 8760 h. */
	assert_near(plan_reserved_charged_s(t, 12, 1.0), 8760 * HOUR, 1e-12);
	/* Half the term carried: max(2400, 4380) = 4380 h. */
	assert_near(plan_reserved_charged_s(t, 12, 0.5), 4380 * HOUR, 1e-12);
	/* A share below the job's own use: the hours used, 2400. */
	assert_near(plan_reserved_charged_s(t, 12, 0.1), 2400 * HOUR, 1e-12);
	assert_near(plan_reserved_charged_s(t, 12, 0.0), 2400 * HOUR, 1e-12);
	/* A 3-year term: 26280 h. */
	assert_near(plan_reserved_charged_s(t, 36, 1.0), 26280 * HOUR, 1e-12);
	/* 9600 h outlasts one year: two terms, 17520 h. */
	assert_near(plan_reserved_charged_s(9600 * HOUR, 12, 1.0), 17520 * HOUR, 1e-12);
	/* Not a commitment: the job's own time. */
	assert_near(plan_reserved_charged_s(t, 0, 1.0), t, 1e-12);
}

/* ---- commitments ------------------------------------------------------------ */

static void offering_init(struct price_offering *o, const char *provider, const char *type,
			  const char *gpu, double od)
{
	memset(o, 0, sizeof(*o));
	snprintf(o->provider, sizeof(o->provider), "%s", provider);
	snprintf(o->instance_type, sizeof(o->instance_type), "%s", type);
	snprintf(o->gpu, sizeof(o->gpu), "%s", gpu);
	snprintf(o->region, sizeof(o->region), "r1");
	o->gpus_per_node = 8;
	o->on_demand_usd_per_hour = od;
	o->spot_usd_per_hour = -1;
}

static void test_price_commitment_find_matches(void **state)
{
	struct price_commitment rows[3];
	struct price_commitments t = { rows, 3 };
	struct price_offering o;

	(void)state;
	memset(rows, 0, sizeof(rows));
	snprintf(rows[0].provider, PRICE_NAME_MAX, "gcp");
	snprintf(rows[0].instance_prefix, PRICE_NAME_MAX, "a3-");
	snprintf(rows[0].gpu, PRICE_NAME_MAX, "H100-SXM5-80GB");
	rows[0].term_months = 12;
	rows[0].discount = 0.2;
	rows[1] = rows[0];
	snprintf(rows[1].instance_prefix, PRICE_NAME_MAX, "a3-highgpu-");
	rows[1].discount = 0.3;
	rows[2] = rows[1];
	rows[2].term_months = 36;
	rows[2].discount = 0.55;
	offering_init(&o, "GCP", "a3-highgpu-8g", "H100-SXM5-80GB", 88);
	/* The longest prefix wins; provider matches case-insensitively. */
	assert_ptr_equal(price_commitment_find(&t, &o, 12), &rows[1]);
	assert_ptr_equal(price_commitment_find(&t, &o, 36), &rows[2]);
	snprintf(o.instance_type, sizeof(o.instance_type), "a3-megagpu-8g");
	assert_ptr_equal(price_commitment_find(&t, &o, 12), &rows[0]);
	assert_null(price_commitment_find(&t, &o, 36));
	/* Another GPU, no on-demand price, owned hardware, no table: none. */
	snprintf(o.gpu, sizeof(o.gpu), "A100-SXM4-40GB");
	assert_null(price_commitment_find(&t, &o, 12));
	snprintf(o.gpu, sizeof(o.gpu), "H100-SXM5-80GB");
	o.on_demand_usd_per_hour = -1;
	assert_null(price_commitment_find(&t, &o, 12));
	o.on_demand_usd_per_hour = 88;
	o.owned = 1;
	assert_null(price_commitment_find(&t, &o, 12));
	o.owned = 0;
	assert_null(price_commitment_find(NULL, &o, 12));
}

/* The shipped catalog, read with a user directory that has no table. */
static struct price_catalog shipped;

static int shipped_setup(void **state)
{
	struct price_opts po;

	(void)state;
	price_opts_init(&po);
	po.data_dir = TEST_DATA_DIR;
	po.user_dir = "/nonexistent-gpuplan-user-dir";
	return price_catalog_load(&shipped, &po) == RC_OK ? 0 : -1;
}

static int shipped_teardown(void **state)
{
	(void)state;
	price_catalog_release(&shipped);
	return 0;
}

static void test_price_commitments_load_shipped(void **state)
{
	struct price_commitments t;

	(void)state;
	assert_int_equal(price_commitments_load(TEST_DATA_DIR "/commitments.csv", &shipped, &t),
			 RC_OK);
	assert_true(t.n >= 6);
	for (size_t i = 0; i < t.n; i++) {
		assert_true(t.rows[i].discount > 0 && t.rows[i].discount < 1);
		assert_true(t.rows[i].term_months == 12 || t.rows[i].term_months == 36);
		assert_non_null(price_gpu_find(&shipped, t.rows[i].gpu));
		assert_true(t.rows[i].source[0] != '\0');
	}
	/* GCP a3-highgpu-8g us-central1 (Cloud Billing catalog, 2025-03-06):
	 * month 64597.70, 1-year 44810.08: 1 - 44810.08 / 64597.70 = 30.63%. */
	for (size_t i = 0; i < shipped.n_offers; i++) {
		const struct price_offering *o = &shipped.offers[i];

		if (strcmp(o->provider, "gcp") == 0 && strcmp(o->instance_type, "a3-highgpu-8g") == 0) {
			const struct price_commitment *c = price_commitment_find(&t, o, 12);

			assert_non_null(c);
			assert_near(c->discount, 0.3063, 1e-12);
		}
	}
	price_commitments_release(&t);
	assert_null(t.rows);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_price_commitments_load_bad(void **state)
{
	char path[] = "/tmp/gpuplan-commit-XXXXXX";
	struct price_commitments t;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	/* A 2-year term does not exist. */
	write_file(path, "provider,instance_prefix,gpu,term_years,discount_pct,price_date,source\n"
			 "gcp,a3-,H100,2,30,2025-01-01,x\n");
	assert_int_equal(price_commitments_load(path, &shipped, &t), RC_INPUT);
	/* Nor does a discount of 0% or a GPU gpus.csv lacks. */
	write_file(path, "provider,instance_prefix,gpu,term_years,discount_pct,price_date,source\n"
			 "gcp,a3-,H100,1,0,2025-01-01,x\n");
	assert_int_equal(price_commitments_load(path, &shipped, &t), RC_INPUT);
	write_file(path, "provider,instance_prefix,gpu,term_years,discount_pct,price_date,source\n"
			 "gcp,a3-,NOPE-9000,1,30,2025-01-01,x\n");
	assert_int_equal(price_commitments_load(path, &shipped, &t), RC_INPUT);
	/* A missing column. */
	write_file(path, "provider,gpu,term_years,discount_pct,price_date,source\n");
	assert_int_equal(price_commitments_load(path, &shipped, &t), RC_INPUT);
	/* An alias resolves to the canonical name. */
	write_file(path, "provider,instance_prefix,gpu,term_years,discount_pct,price_date,source\n"
			 "gcp,a3-,h100,3,55,2025-01-01,x\n");
	assert_int_equal(price_commitments_load(path, &shipped, &t), RC_OK);
	assert_int_equal(t.n, 1);
	assert_string_equal(t.rows[0].gpu, "H100-SXM5-80GB");
	assert_int_equal(t.rows[0].term_months, 36);
	assert_near(t.rows[0].discount, 0.55, 1e-12);
	price_commitments_release(&t);
	unlink(path);
}

static void test_price_hardware_load_shipped(void **state)
{
	struct price_hardware_table t;
	const struct price_hardware *h;

	(void)state;
	assert_int_equal(price_hardware_load(TEST_DATA_DIR "/hardware.csv", &shipped, &t), RC_OK);
	assert_true(t.n >= 3);
	h = price_hardware_for_gpu(&t, "H100-SXM5-80GB");
	assert_non_null(h);
	/* Dihuni, 2024-03-21: 8 x 37080.50 USD per GPU = 296644 USD. */
	assert_near(h->price_usd, 296644, 0);
	assert_int_equal(h->gpus, 8);
	assert_false(h->cards_only);
	h = price_hardware_for_gpu(&t, "RTX4090");
	assert_non_null(h);
	/* 8 x 1599 USD launch price, host not priced. */
	assert_near(h->price_usd, 12792, 0);
	assert_true(h->cards_only);
	assert_null(price_hardware_for_gpu(&t, "NOPE"));
	price_hardware_release(&t);
}

static void test_price_hardware_load_bad(void **state)
{
	char path[] = "/tmp/gpuplan-hw-XXXXXX";
	struct price_hardware_table t;
	const char *head = "name,description,gpu,gpus,price_usd,price_scope,host_power_w,nic_gbps,"
			   "price_date,vendor,source\n";
	char buf[512];
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	snprintf(buf, sizeof(buf), "%sbox,d,H100,8,1000,rack,100,,2024-01-01,v,s\n", head);
	write_file(path, buf);
	assert_int_equal(price_hardware_load(path, &shipped, &t), RC_INPUT);
	snprintf(buf, sizeof(buf), "%sbox,d,H100,7.5,1000,server,100,,2024-01-01,v,s\n", head);
	write_file(path, buf);
	assert_int_equal(price_hardware_load(path, &shipped, &t), RC_INPUT);
	snprintf(buf, sizeof(buf), "%sbox,d,H100,8,1000,server,100,,2024-01-01,v,s\n"
		 "box,d,H100,8,2000,server,100,,2024-01-01,v,s\n", head);
	write_file(path, buf);
	assert_int_equal(price_hardware_load(path, &shipped, &t), RC_INPUT);
	snprintf(buf, sizeof(buf), "%sbox,d,H100,8,1000,server,100,400,2024-01-01,v,s\n", head);
	write_file(path, buf);
	assert_int_equal(price_hardware_load(path, &shipped, &t), RC_OK);
	/* 400 Gbit/s = 50e9 bytes/s. */
	assert_near(t.rows[0].inter_node_bytes_per_s, 50e9, 1e-12);
	price_hardware_release(&t);
	unlink(path);
}


/* ---- capacity blocks ---------------------------------------------------------- */

#define DAY_S 86400.0

/* AWS's terms: 1-64 instances, whole days to 14, weeks beyond, 182 at most. */
static void block_init(struct price_block *b, const char *prefix, double rate)
{
	memset(b, 0, sizeof(*b));
	snprintf(b->provider, sizeof(b->provider), "acloud");
	snprintf(b->instance_prefix, sizeof(b->instance_prefix), "%s", prefix);
	snprintf(b->region, sizeof(b->region), "r1");
	b->usd_per_hour = rate;
	b->min_nodes = 1;
	b->max_nodes = 64;
	b->min_days = 1;
	b->max_days = 182;
	b->step_days = 1;
	b->long_step_days = 7;
	b->long_from_days = 14;
	snprintf(b->price_date, sizeof(b->price_date), "2024-12-31");
	snprintf(b->source, sizeof(b->source), "test");
}

static void test_price_block_billed_s_terms(void **state)
{
	struct price_block b;

	(void)state;
	block_init(&b, "big", 40);
	/* An hour pays the shortest term, a day. */
	assert_near(price_block_billed_s(&b, 3600), DAY_S, 1e-12);
	/* Two days are two days; a second more is a third day. */
	assert_near(price_block_billed_s(&b, 2 * DAY_S), 2 * DAY_S, 1e-12);
	assert_near(price_block_billed_s(&b, 2 * DAY_S + 1), 3 * DAY_S, 1e-12);
	/* 14 days is the last whole-day term; 14.5 days is 15, in weeks 21. */
	assert_near(price_block_billed_s(&b, 14 * DAY_S), 14 * DAY_S, 1e-12);
	assert_near(price_block_billed_s(&b, 14.5 * DAY_S), 21 * DAY_S, 1e-12);
	/* 175.5 days is 176, in weeks 182: the longest term. */
	assert_near(price_block_billed_s(&b, 175.5 * DAY_S), 182 * DAY_S, 1e-12);
	assert_near(price_block_billed_s(&b, 182 * DAY_S), 182 * DAY_S, 1e-12);
	/* A second beyond 182 days: 183 days, in weeks 189 > 182: no block. */
	assert_true(price_block_billed_s(&b, 182 * DAY_S + 1) < 0);
}

static void test_price_block_find_and_limit(void **state)
{
	struct price_block rows[2];
	struct price_blocks t = { rows, 2 };
	struct price_offering o;
	struct price_node_limit l;

	(void)state;
	block_init(&rows[0], "big", 40);
	block_init(&rows[1], "big8", 30);
	offering_init(&o, "ACLOUD", "big8", "BIG", 80);
	/* The longest prefix in the same region wins; provider case-insensitive. */
	assert_ptr_equal(price_block_find(&t, &o), &rows[1]);
	snprintf(o.region, sizeof(o.region), "r2");
	assert_null(price_block_find(&t, &o));
	snprintf(o.region, sizeof(o.region), "r1");
	o.owned = 1;
	assert_null(price_block_find(&t, &o));
	o.owned = 0;
	assert_null(price_block_find(NULL, &o));
	assert_null(price_block_find_unpriced(&t, &o));
	/* A longer prefix with no rate names a product and sells nothing:
	 * price_block_find does not fall back to the shorter priced row */
	{
		struct price_block u[3];
		struct price_blocks tu = { u, 3 };

		u[0] = rows[0];
		u[1] = rows[1];
		block_init(&u[2], "big8", 0);
		snprintf(u[2].instance_prefix, sizeof(u[2].instance_prefix), "big8x");
		snprintf(o.instance_type, sizeof(o.instance_type), "big8x");
		assert_null(price_block_find(&tu, &o));
		assert_ptr_equal(price_block_find_unpriced(&tu, &o), &u[2]);
		assert_ptr_equal(price_block_match(&tu, &o), &u[2]);
		snprintf(o.instance_type, sizeof(o.instance_type), "big8");
		assert_null(price_block_find_unpriced(&tu, &o));
	}
	/* Without a network a block is one node; with one, the block's 64,
	 * whatever capacity.csv says of on-demand; a quota of 80 GPUs is 10
	 * nodes of 8. */
	price_block_node_limit(&o, &rows[1], &l);
	assert_int_equal(l.nodes, 1);
	assert_int_equal(l.why, PRICE_LIMIT_NETWORK);
	o.inter_node_bytes_per_s = 400e9;
	o.capacity_nodes = 4;
	price_block_node_limit(&o, &rows[1], &l);
	assert_int_equal(l.nodes, 64);
	assert_int_equal(l.why, PRICE_LIMIT_BLOCK);
	{
		struct price_quota q;

		memset(&q, 0, sizeof(q));
		q.max_gpus = 80;
		o.quota = &q;
		price_block_node_limit(&o, &rows[1], &l);
		assert_int_equal(l.nodes, 10);
		assert_int_equal(l.why, PRICE_LIMIT_QUOTA);
		o.quota = NULL;
	}
	assert_string_equal(price_limit_str(PRICE_LIMIT_BLOCK), "product size");
	assert_string_equal(price_purchase_str(PRICE_PURCHASE_BLOCK), "capacity-block");
}

static void test_price_blocks_load_shipped(void **state)
{
	struct price_blocks t;
	long days;

	(void)state;
	assert_int_equal(price_blocks_load(TEST_DATA_DIR "/blocks.csv", &t), RC_OK);
	assert_true(t.n >= 4);
	for (size_t i = 0; i < t.n; i++) {
		int sold = 0;

		/* a product no source prices (Lambda's 1-Click Clusters): its
		 * name, never a purchase option */
		if (!(t.rows[i].usd_per_hour > 0)) {
			assert_true(t.rows[i].product[0] != '\0');
			for (size_t j = 0; j < shipped.n_offers; j++)
				if (price_block_match(&t, &shipped.offers[j]) == &t.rows[i]) {
					sold = 1;
					assert_null(price_block_find(&t, &shipped.offers[j]));
					assert_ptr_equal(price_block_find_unpriced(&t, &shipped.offers[j]),
							 &t.rows[i]);
				}
			assert_true(sold);
			continue;
		}
		assert_int_equal(unit_parse_date(t.rows[i].price_date, &days), RC_OK);
		/* an EC2 Capacity Block: 64 instances, 182 days; a GCP
		 * calendar-mode request: 80 VMs, 90 days */
		assert_true(t.rows[i].min_nodes >= 1 && t.rows[i].max_nodes <= 80);
		assert_true(t.rows[i].max_days <= 182);
		for (size_t j = 0; j < shipped.n_offers; j++)
			sold |= price_block_find(&t, &shipped.offers[j]) == &t.rows[i];
		assert_true(sold);
	}
	/* AWS Capacity Blocks pricing page as of 2026-07-22: p5.48xlarge in
	 * US East (N. Virginia) 41.528 USD per instance-hour, up front. */
	for (size_t j = 0; j < shipped.n_offers; j++) {
		const struct price_offering *o = &shipped.offers[j];

		if (!strcmp(o->instance_type, "p5.48xlarge") && !strcmp(o->region, "us-east-1")) {
			assert_non_null(price_block_find(&t, o));
			assert_near(price_block_find(&t, o)->usd_per_hour, 41.528, 1e-12);
			assert_int_equal(price_block_find(&t, o)->payment, PRICE_PAYMENT_UPFRONT);
		}
	}
	price_blocks_release(&t);
	assert_null(t.rows);
}

static void test_price_blocks_load_bad(void **state)
{
	static const char header[] = "provider,instance_prefix,region,usd_per_hour,min_nodes,"
				     "max_nodes,min_days,max_days,step_days,long_step_days,"
				     "long_from_days,price_date,source\n";
	static const char *const bad[] = {
		"aws,p5.,us-east-1,39.33,65,64,1,182,1,7,14,2024-12-31,x\n",  /* min > max nodes */
		"aws,p5.,us-east-1,39.33,1,64,1,182,1,7,14,2024-13-01,x\n",   /* no month 13 */
		"aws,p5.,us-east-1,39.33,1,64,1,182,1,7,,2024-12-31,x\n",     /* a step without its start */
		"aws,p5.,us-east-1,0,1,64,1,182,1,7,14,2024-12-31,x\n",       /* no rate */
		"aws,p5.,us-east-1,39.33,1,64,1.5,182,1,7,14,2024-12-31,x\n", /* half a day */
		"aws,p5.,us-east-1,39.33,1,64,1,182,1,7,14,2024-12-31,x\n"
		"aws,p5.,us-east-1,30,1,64,1,182,1,7,14,2024-12-31,y\n",      /* the same key twice */
	};
	char path[] = "/tmp/gpuplan-blocks-XXXXXX", text[1024];
	struct price_blocks t;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	for (size_t i = 0; i < GP_ARRAY_LEN(bad); i++) {
		snprintf(text, sizeof(text), "%s%s", header, bad[i]);
		write_file(path, text);
		assert_int_equal(price_blocks_load(path, &t), RC_INPUT);
	}
	write_file(path, "provider,instance_prefix,region,usd_per_hour\n");
	assert_int_equal(price_blocks_load(path, &t), RC_INPUT);
	snprintf(text, sizeof(text), "%s%s", header,
		 "aws,p5.,us-east-1,39.33,1,64,1,182,1,,,2024-12-31,x\n");
	write_file(path, text);
	assert_int_equal(price_blocks_load(path, &t), RC_OK);
	assert_int_equal(t.n, 1);
	assert_int_equal(t.rows[0].long_step_days, 0);
	price_blocks_release(&t);
	unlink(path);
}

static void test_price_catalog_add_owned(void **state)
{
	struct price_catalog cat;
	struct price_hardware h;
	struct price_gpu g;

	(void)state;
	machine_init(&h, &g);
	memset(&cat, 0, sizeof(cat));
	price_catalog_add_owned(&cat, &h, 2, 1.836);
	assert_int_equal(cat.n_offers, 1);
	assert_string_equal(cat.offers[0].provider, "owned");
	assert_string_equal(cat.offers[0].instance_type, "box");
	assert_int_equal(cat.offers[0].gpus_per_node, 8);
	assert_int_equal(cat.offers[0].max_nodes, 2);
	assert_true(cat.offers[0].owned);
	assert_near(cat.offers[0].on_demand_usd_per_hour, 1.836, 0);
	assert_true(cat.offers[0].spot_usd_per_hour < 0);
	free(cat.offers);
}

/* ---- pricing a candidate ---------------------------------------------------- */

static struct sim_model small_model(void)
{
	struct sim_model m;

	/* A 1.3B GPT (24 layers, hidden 2048) */
	memset(&m, 0, sizeof(m));
	snprintf(m.name, sizeof(m.name), "gpt-1.3b");
	m.layers = 24;
	m.hidden = 2048;
	m.heads = 16;
	m.kv_heads = 16;
	m.ffn = 8192;
	m.vocab = 50304;
	m.seq = 2048;
	m.mlp = SIM_MLP_GELU;
	m.tied_embeddings = 1;
	m.gbs = 256;
	return m;
}

static void test_plan_candidate_price_parts(void **state)
{
	struct sim_model m = small_model();
	struct plan_job job;
	struct plan_opts o;
	struct plan_candidate c;
	struct price_offering of;
	struct price_commitment row;
	struct price_commitments t = { &row, 1 };
	double params = sim_model_params(&m), ckpt = params * 14, work, wall;

	(void)state;
	plan_job_init(&job, &m, 1e12);
	plan_opts_init(&o);
	offering_init(&of, "acloud", "big8", "BIG", 80);
	memset(&c, 0, sizeof(c));
	c.offering = &of;
	c.nodes = 2;
	c.res.tokens_per_s = 1e6;
	c.purchase = PRICE_PURCHASE_ON_DEMAND;
	/* A pinned hour and no failures, to see each part on its own. */
	o.ckpt_interval_s = 3600;
	o.failures_per_gpu_hour = 0;
	assert_int_equal(plan_candidate_price(&c, &job, &o), 0);
	/* 1e12 tokens at 1e6 tokens/s = 1e6 s of work.  A checkpoint of
	 * 14 B/param written by 2 nodes at 1 GB/s each takes 7 params / 1e9
	 * seconds; one every 3600 s stalls the run by that fraction. */
	work = 1e6;
	assert_near(c.costs.ckpt_bytes, ckpt, 1e-12);
	assert_near(c.costs.ckpt_write_s, ckpt / 2e9, 1e-12);
	wall = work * (1 + ckpt / 2e9 / 3600);
	/* The job's start-up comes before it, billed; provisioning (not
	 * stated for this offering) and billing increments add nothing. */
	wall += o.startup_s;
	assert_near(c.costs.startup_s, PLAN_DEFAULT_STARTUP_S, 1e-12);
	assert_near(c.costs.provision_s, 0, 1e-12);
	assert_near(c.time_s, wall, 1e-12);
	/* 2 nodes x 80 USD/h for wall hours, plus 2 checkpoints at 0.023
	 * USD/GB-month for wall / (730 h) months. */
	assert_near(c.costs.compute_usd, wall / HOUR * 160, 1e-12);
	assert_near(c.costs.storage_usd, 2 * ckpt / 1e9 * 0.023 * wall / (730 * HOUR), 1e-12);
	assert_near(c.cost_usd, c.costs.compute_usd + c.costs.storage_usd, 1e-12);
	assert_false(c.spot);

	/* Reserved 1 year at 40% off, the whole term carried: 2 nodes x 48
	 * USD/h x 8760 h = 840960 USD; it beats on-demand only if the job
	 * carried at most wall / (8760 h x 0.6) of the term. */
	memset(&row, 0, sizeof(row));
	snprintf(row.provider, PRICE_NAME_MAX, "acloud");
	snprintf(row.instance_prefix, PRICE_NAME_MAX, "big");
	snprintf(row.gpu, PRICE_NAME_MAX, "BIG");
	row.term_months = 12;
	row.discount = 0.4;
	o.commitments = &t;
	c.purchase = PRICE_PURCHASE_RESERVED_1Y;
	assert_int_equal(plan_candidate_price(&c, &job, &o), 0);
	assert_near(c.usd_per_hour, 96, 1e-12);
	assert_near(c.costs.compute_usd, 840960, 1e-12);
	assert_near(c.costs.on_demand_cost_usd, wall / HOUR * 160, 1e-12);
	assert_near(c.costs.breakeven_share, wall / (YEAR_S * 0.6), 1e-12);
	assert_near(c.time_s, wall, 1e-12);
	/* A quarter of the term: max(wall, 2190 h) = 2190 h x 96 = 210240. */
	o.commitment_share = 0.25;
	assert_int_equal(plan_candidate_price(&c, &job, &o), 0);
	assert_near(c.costs.compute_usd, 210240, 1e-12);
	/* No 3-year row: the option does not exist. */
	c.purchase = PRICE_PURCHASE_RESERVED_3Y;
	assert_int_equal(plan_candidate_price(&c, &job, &o), -1);
	/* No checkpoints and no failures: the wall time is the work. */
	o.ckpt_interval_s = 0;
	c.purchase = PRICE_PURCHASE_ON_DEMAND;
	assert_int_equal(plan_candidate_price(&c, &job, &o), 0);
	assert_near(c.time_s, work + o.startup_s, 1e-12);
	/* The defaults: failures on 2 x 8 GPUs, Young/Daly's interval; the
	 * wall time is the work over the effective training time. */
	plan_opts_init(&o);
	assert_int_equal(plan_candidate_price(&c, &job, &o), 0);
	assert_false(c.interrupt.pinned);
	assert_near(c.interrupt.failures_per_hour, 16 * PLAN_DEFAULT_FAILURES_PER_GPU_HOUR, 1e-12);
	assert_near(c.costs.ckpt_interval_s, c.interrupt.interval_s, 1e-12);
	assert_near(c.time_s, work / (1 - c.interrupt.waste) + o.startup_s, 1e-12);
	assert_near(c.interrupt.expected, (c.time_s - o.startup_s) / c.interrupt.mtbf_s, 1e-9);
}

/* ---- the planner: a reserved column wins only for a long job -------------- */

static struct price_gpu big_gpu;
static struct price_offering big_offer;
static struct price_catalog big_cat;
static struct price_commitment big_commit;
static struct price_commitments big_commits = { &big_commit, 1 };

static void big_init(void)
{
	memset(&big_gpu, 0, sizeof(big_gpu));
	snprintf(big_gpu.name, sizeof(big_gpu.name), "BIG");
	big_gpu.memory_bytes = 80e9;
	big_gpu.hbm_bytes_per_s = 3e12;
	big_gpu.bf16_flops_per_s = 1e15;
	big_gpu.intra_bytes_per_s = 450e9;
	big_gpu.nvlink = 1;
	big_gpu.p2p = 1;
	offering_init(&big_offer, "acloud", "big8", "BIG", 80);
	big_offer.inter_node_bytes_per_s = 400e9;
	memset(&big_cat, 0, sizeof(big_cat));
	big_cat.gpus = &big_gpu;
	big_cat.n_gpus = 1;
	big_cat.offers = &big_offer;
	big_cat.n_offers = 1;
	memset(&big_commit, 0, sizeof(big_commit));
	snprintf(big_commit.provider, PRICE_NAME_MAX, "acloud");
	snprintf(big_commit.instance_prefix, PRICE_NAME_MAX, "big");
	snprintf(big_commit.gpu, PRICE_NAME_MAX, "BIG");
	big_commit.term_months = 12;
	big_commit.discount = 0.5;
}

/* The answer's purchase option and its time for tokens on one node. */
static enum price_purchase answer(double tokens, double share, double *time_s)
{
	struct sim_model m = small_model();
	struct plan_job job;
	struct plan_opts o;
	struct plan_result r;
	enum price_purchase p;

	plan_job_init(&job, &m, tokens);
	plan_opts_init(&o);
	o.objective = PLAN_OBJECTIVE_COST;
	o.filter.max_gpus = 8;
	o.top = 1;
	o.commitments = &big_commits;
	o.commitment_share = share;
	o.startup_s = 0; /* the arithmetic below is the terms' */
	assert_int_equal(plan_run(&job, 1, &big_cat, &o, &r), RC_OK);
	p = r.rows[0].c.purchase;
	*time_s = r.rows[0].c.time_s;
	plan_result_release(&r);
	return p;
}

static void test_plan_run_reserved_wins_only_when_long(void **state)
{
	double t_short, t_long, tokens = 10e9;

	(void)state;
	big_init();
	/* A short job on one node: on-demand costs t x 80 USD/h, the reserved
	 * year 8760 h x 40 USD/h = 350400 USD.  t is far below the break-even
	 * 8760 h x (1 - 0.5) = 4380 h, so on-demand wins. */
	assert_int_equal(answer(tokens, 1.0, &t_short), PRICE_PURCHASE_ON_DEMAND);
	assert_true(t_short < 4380 * HOUR);
	/* The same plan with three quarters of a year of work (time scales
	 * with tokens on a fixed node): on-demand 0.75 x 8760 h x 80 = 525600
	 * USD against the reserved 350400 USD: reserved wins. */
	tokens *= 0.75 * YEAR_S / t_short;
	assert_int_equal(answer(tokens, 1.0, &t_long), PRICE_PURCHASE_RESERVED_1Y);
	assert_near(t_long, 0.75 * YEAR_S, 1e-3);
	/* A third of a year: 2920 h x 80 = 233600 < 350400, on-demand again. */
	tokens *= (1.0 / 3) / 0.75;
	assert_int_equal(answer(tokens, 1.0, &t_long), PRICE_PURCHASE_ON_DEMAND);
	/* ...unless the job carries a quarter of the term (other work fills the
	 * rest): max(2920, 2190) h x 40 = 116800 < 233600, reserved wins. */
	assert_int_equal(answer(tokens, 0.25, &t_long), PRICE_PURCHASE_RESERVED_1Y);
}


/* A capacity block bills whole days up front at its own rate, bounded by
 * its own node count, and is not offered beyond its longest term. */
static void test_plan_candidate_price_block(void **state)
{
	struct sim_model m = small_model();
	struct plan_job job;
	struct plan_opts o;
	struct plan_candidate c;
	struct price_offering of;
	struct price_block b;
	double work = 1e6, wall;

	(void)state;
	plan_job_init(&job, &m, 1e12);
	plan_opts_init(&o);
	o.ckpt_interval_s = 0;
	o.failures_per_gpu_hour = 0;
	offering_init(&of, "acloud", "big8", "BIG", 80);
	of.inter_node_bytes_per_s = 400e9;
	block_init(&b, "big", 40);
	memset(&c, 0, sizeof(c));
	c.offering = &of;
	c.block = &b;
	c.nodes = 2;
	c.res.tokens_per_s = 1e6;
	c.purchase = PRICE_PURCHASE_BLOCK;
	assert_int_equal(plan_candidate_price(&c, &job, &o), 0);
	/* 1e6 s of work and 600 s of start-up: 11.58 days, paid as 12 days
	 * x 24 h x 2 instances x 40 USD = 23040 USD. */
	wall = work + o.startup_s;
	assert_near(c.time_s, wall, 1e-12);
	assert_near(c.usd_per_hour, 80, 1e-12);
	assert_near(c.costs.charged_s, 12 * DAY_S, 1e-12);
	assert_near(c.costs.compute_usd, 23040, 1e-12);
	assert_near(c.costs.billed_extra_s, 12 * DAY_S - wall, 1e-9);
	assert_int_equal(c.limit.why, PRICE_LIMIT_BLOCK);
	assert_int_equal(c.limit.nodes, 64);
	assert_string_equal(plan_candidate_price_date(&c), "2024-12-31");
	/* 200 days of work does not fit in one block of at most 182 days. */
	job.tokens = 200 * DAY_S * 1e6;
	assert_int_equal(plan_candidate_price(&c, &job, &o), -1);
	/* Sold in whole units of 18 nodes (an UltraServer): a job on 16 of
	 * them pays for 18, and the block's 64 become 3 whole units (54). */
	job.tokens = 1e12;
	of.node_multiple = 18;
	c.nodes = 16;
	assert_int_equal(plan_candidate_price(&c, &job, &o), 0);
	assert_int_equal(c.billed_nodes, 18);
	assert_int_equal(c.limit.multiple, 18);
	assert_int_equal(c.limit.nodes, 54);
	assert_near(c.usd_per_hour, 18 * 40, 1e-12);
	assert_near(c.costs.compute_usd, 12 * 24 * 18 * 40, 1e-12);
	/* on demand, the same unit: 16 nodes pay 18 x 80 */
	c.block = NULL;
	c.purchase = PRICE_PURCHASE_ON_DEMAND;
	of.capacity_nodes = 18;
	assert_int_equal(plan_candidate_price(&c, &job, &o), 0);
	assert_int_equal(c.billed_nodes, 18);
	assert_near(c.usd_per_hour, 18 * 80, 1e-12);
	/* one unit of 18 is also what 18 nodes pay */
	c.nodes = 18;
	assert_int_equal(plan_candidate_price(&c, &job, &o), 0);
	assert_int_equal(c.billed_nodes, 18);
	assert_int_equal(c.max_nodes_hit, 1);
}

static struct price_block big_block;
static struct price_blocks big_blocks = { &big_block, 1 };

/* The answer's purchase option for tokens on one BIG node with a block at
 * 40 USD/h beside on-demand at 80 (spot: spot only). */
static enum price_purchase block_answer(double tokens, int spot, double *cost_usd)
{
	struct sim_model m = small_model();
	struct plan_job job;
	struct plan_opts o;
	struct plan_result r;
	enum price_purchase p;

	big_init();
	block_init(&big_block, "big", 40);
	plan_job_init(&job, &m, tokens);
	plan_opts_init(&o);
	o.objective = PLAN_OBJECTIVE_COST;
	o.filter.max_gpus = 8;
	o.filter.spot = spot;
	o.top = 1;
	o.blocks = &big_blocks;
	o.startup_s = 0;
	/* none; spot checkpoints at Young/Daly's interval (none would start
	 * ten days over at every preemption) */
	o.ckpt_interval_s = spot == 1 ? PLAN_CKPT_INTERVAL_AUTO : 0;
	o.failures_per_gpu_hour = 0;
	if (spot == 1)
		big_offer.spot_usd_per_hour = 60;
	assert_int_equal(plan_run(&job, 1, &big_cat, &o, &r), RC_OK);
	p = r.rows[0].c.purchase;
	*cost_usd = r.rows[0].c.costs.compute_usd;
	plan_result_release(&r);
	return p;
}

static void test_plan_run_block_against_on_demand(void **state)
{
	double t1, cost, tokens = 10e9;

	(void)state;
	big_init();
	/* Time the job takes on one node, from the on-demand answer alone. */
	(void)answer(tokens, 1.0, &t1);
	/* A few hours: on-demand t x 80 USD beats a whole day at 40 (960). */
	tokens *= 3 * HOUR / t1;
	assert_int_equal(block_answer(tokens, -1, &cost), PRICE_PURCHASE_ON_DEMAND);
	assert_true(cost > 200 && cost <= 3 * 80);
	/* Ten days: the block's 10 x 24 x 40 = 9600 USD beats 19200. */
	tokens *= 10 * DAY_S / (3 * HOUR);
	assert_int_equal(block_answer(tokens, -1, &cost), PRICE_PURCHASE_BLOCK);
	assert_near(cost, 9600, 1e-6);
	/* Spot only: no block (it is not spot). */
	assert_int_equal(block_answer(tokens, 1, &cost), PRICE_PURCHASE_SPOT);
	big_offer.spot_usd_per_hour = -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_price_owned_cost_amortisation),
		cmocka_unit_test(test_price_owned_cost_power_pue),
		cmocka_unit_test(test_price_owned_opts_check_rejects),
		cmocka_unit_test(test_plan_storage_cost_usd),
		cmocka_unit_test(test_plan_reserved_charged_s),
		cmocka_unit_test(test_price_commitment_find_matches),
		cmocka_unit_test_setup_teardown(test_price_commitments_load_shipped, shipped_setup,
						shipped_teardown),
		cmocka_unit_test_setup_teardown(test_price_commitments_load_bad, shipped_setup,
						shipped_teardown),
		cmocka_unit_test_setup_teardown(test_price_hardware_load_shipped, shipped_setup,
						shipped_teardown),
		cmocka_unit_test_setup_teardown(test_price_hardware_load_bad, shipped_setup,
						shipped_teardown),
		cmocka_unit_test(test_price_block_billed_s_terms),
		cmocka_unit_test(test_price_block_find_and_limit),
		cmocka_unit_test_setup_teardown(test_price_blocks_load_shipped, shipped_setup,
						shipped_teardown),
		cmocka_unit_test(test_price_blocks_load_bad),
		cmocka_unit_test(test_price_catalog_add_owned),
		cmocka_unit_test(test_plan_candidate_price_parts),
		cmocka_unit_test(test_plan_run_reserved_wins_only_when_long),
		cmocka_unit_test(test_plan_candidate_price_block),
		cmocka_unit_test(test_plan_run_block_against_on_demand),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
