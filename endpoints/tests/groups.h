/* One line per test file: CHUNK_TEST_GROUP(name) for tests/test_<name>.c,
 * which defines `const chunk_test_t name_tests[]`. */
CHUNK_TEST_GROUP(protocol2)
CHUNK_TEST_GROUP(wire)
CHUNK_TEST_GROUP(sim)
CHUNK_TEST_GROUP(sender)
CHUNK_TEST_GROUP(receiver)
CHUNK_TEST_GROUP(platform)
CHUNK_TEST_GROUP(pcapout)
CHUNK_TEST_GROUP(attacks)
CHUNK_TEST_GROUP(frag)
CHUNK_TEST_GROUP(netgame)
CHUNK_TEST_GROUP(netgame_soak)
CHUNK_TEST_GROUP(reliable)
