/* cmd_prices.c - placeholder until the prices command lands (replace this file). */
#include "cli.h"

enum rc cmd_prices(int argc, char **argv)
{
	(void)argc;
	gp_error("%s: not built yet", argv[0]);
	return RC_ERR;
}
