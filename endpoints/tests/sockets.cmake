# Real-UDP tests of chunk-send, chunk-recv and chunk-relay on loopback only
# (scripts/test-loopback.sh): through the relay at 20% loss, over IPv6, and
# the command-line behaviour. Ports come from the kernel, so runs in parallel
# do not clash; exit 77 (no ::1, say) is a skip. Labelled "sanitize" so the
# programs also run under ASan/UBSan (scripts/test.sh).
foreach(mode relay ipv6 cli)
  add_test(NAME endpoints.sockets.${mode}
           COMMAND ${PROJECT_SOURCE_DIR}/scripts/test-loopback.sh $<TARGET_FILE_DIR:chunk-send> ${mode})
  set_tests_properties(endpoints.sockets.${mode} PROPERTIES TIMEOUT 60 SKIP_RETURN_CODE 77
                       LABELS "endpoints;sockets;sanitize")
endforeach()

# p2frag-send and p2frag-recv, directly and through chunk-relay (scripts/test-p2frag-loopback.sh).
foreach(mode relay cli)
  add_test(NAME endpoints.p2frag-sockets.${mode}
           COMMAND ${PROJECT_SOURCE_DIR}/scripts/test-p2frag-loopback.sh $<TARGET_FILE_DIR:p2frag-send> ${mode})
  set_tests_properties(endpoints.p2frag-sockets.${mode} PROPERTIES TIMEOUT 90
                       LABELS "endpoints;sockets;sanitize")
endforeach()

# netgame-client and netgame-server on loopback (scripts/test-netgame-loopback.sh):
# through chunk-relay at 10% loss, and the command line.
foreach(mode relay cli)
  add_test(NAME endpoints.sockets.netgame-${mode}
           COMMAND ${PROJECT_SOURCE_DIR}/scripts/test-netgame-loopback.sh $<TARGET_FILE_DIR:netgame-client> ${mode})
  set_tests_properties(endpoints.sockets.netgame-${mode} PROPERTIES TIMEOUT 60 LABELS "endpoints;sockets;sanitize")
endforeach()

# netcode-token, netcode-server and netcode-client on loopback
# (scripts/test-netcode-loopback.sh): directly, through chunk-relay at 10% loss
# and 10% duplicates, and the command line.
foreach(mode play relay cli)
  add_test(NAME endpoints.sockets.netcode-${mode}
           COMMAND ${PROJECT_SOURCE_DIR}/scripts/test-netcode-loopback.sh $<TARGET_FILE_DIR:netcode-client> ${mode})
  set_tests_properties(endpoints.sockets.netcode-${mode} PROPERTIES TIMEOUT 60 LABELS "endpoints;sockets;sanitize")
endforeach()
