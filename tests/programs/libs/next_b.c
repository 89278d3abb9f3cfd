int probe_tool(void) { return 2; }
