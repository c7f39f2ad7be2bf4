/* cmd_models.c - placeholder until the models command lands (replace this file). */
#include "cli.h"

enum rc cmd_models(int argc, char **argv)
{
	(void)argc;
	gp_error("%s: not built yet", argv[0]);
	return RC_ERR;
}
