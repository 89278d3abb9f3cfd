int leaf_value(void) { return 42; }
