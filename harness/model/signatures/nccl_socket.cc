// NCCL's sockets (the bootstrap, the socket transport and the proxy): a peer closed its end, a call
// failed, or a connection could not be set up. A closed or failed socket during a collective fails the
// request, and the communicator reports ncclRemoteError: an async_error detection. A connect that ran
// out of retries fails communicator setup: a bootstrap detection. From 2.24, a reset or a broken pipe
// is reported as "closed by remote peer" instead of as a failed call.
#include "signature_family.h"

namespace ncclfi::harness {

extern const SignatureFamily kNcclSocketFamily{
    .name = "nccl_socket",
    .title = "NCCL's sockets: closed, failed, refused",
    .software = "NCCL (src/misc/socket.cc; src/os/linux.cc from 2.29.2; src/transport/net_socket.cc)",
    .lines =
        {{.id = "nccl.socket_closed_by_peer",
          .regex = R"(socketProgress: Connection closed by remote peer)",
          .must_contain = "Connection closed by remote peer",
          .shown = "`socketProgress: Connection closed by remote peer <host><port>`",
          .example =
              R"(gpu004:2200689:2200706 [3] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer gpu004.ds-a4-r02.abc.com<55693>)",
          .implies = "async_error",
          .format = "socketProgress: Connection closed by remote peer %s",
          .versions = "NCCL 2.16.2 to 2.30 (from 2.24.3 also for a reset or a broken pipe)",
          .cited = "NVIDIA/nccl src/misc/socket.cc (socketProgress)",
          .reported = "NVIDIA/nccl-tests#166, NVIDIA/nccl#1612",
          .meaning = "the peer's end of a socket went away: its process died or its host dropped off",
          .site = "dead_rank",
          .printed_by = "the dead rank's peers; the address is the dead end's"},
         {.id = "nccl.net_closed_by_peer",
          .regex = R"(Net : Connection closed by remote peer)",
          .must_contain = "Connection closed by remote peer",
          .shown = "`Net : Connection closed by remote peer <host><port>`",
          .example =
              R"(node2:5120:5188 [1] NCCL WARN Net : Connection closed by remote peer 10.1.0.3<40122>)",
          .implies = "async_error",
          .format = "Net : Connection closed by remote peer %s",
          .versions = "NCCL 2.4.2 to 2.15.5 (without the address before 2.10.3)",
          .cited = "NVIDIA/nccl src/include/socket.h, src/misc/socket.cc",
          .meaning = "the peer's end of a socket went away: its process died or its host dropped off",
          .site = "dead_rank",
          .printed_by = "the dead rank's peers"},
         {.id = "nccl.socket_call_failed",
          .regex =
              R"((?:ncclOsSocketProgressOpt|socketProgressOpt): Call to (?:recv from|send to) \S+ failed : )",
          .must_contain = "ProgressOpt: Call to ",
          .shown = "`socketProgressOpt: Call to recv from <host><port> failed : Broken pipe`",
          .example = R"(socketProgressOpt: Call to recv from 10.119.24.53<49901> failed : Broken pipe)",
          .implies = "async_error",
          .format = "socketProgressOpt: Call to %s %s failed : %s",
          .versions = "NCCL 2.16.2 to 2.28.9 (`recv from` for sends too before 2.24.3); "
                      "`ncclOsSocketProgressOpt` from 2.29.2",
          .cited = "NVIDIA/nccl src/misc/socket.cc (socketProgressOpt), src/os/linux.cc (v2.29.2-1)",
          .reported = "hiyouga/LlamaFactory#6849 (as PyTorch's `Last error:`)",
          .meaning = "a send or receive failed: reset or broken pipe (a dead peer), or a timeout or an "
                     "unreachable host (the link)",
          .site = "dead_rank,degraded_link",
          .printed_by = "the peers of the failed end"},
         {.id = "nccl.net_call_failed",
          .regex = R"((?:^|\s)(?:Net : )?Call to recv (?:from \S+ )?failed : )",
          .must_contain = "Call to recv ",
          .shown = "`Net : Call to recv from <host><port> failed : Connection reset by peer`",
          .example =
              R"(node2:5120:5188 [1] NCCL WARN Net : Call to recv from 10.1.0.3<40122> failed : Connection reset by peer)",
          .implies = "async_error",
          .format = "Net : Call to recv from %s failed : %s",
          .versions = "NCCL 2.10.3 to 2.15.5; `Call to recv failed : %s` from 2.4.2 to 2.9.9",
          .cited = "NVIDIA/nccl src/include/socket.h, src/misc/socket.cc",
          .meaning = "a receive failed: reset (a dead peer), or a timeout or an unreachable host (the link)",
          .site = "dead_rank,degraded_link",
          .printed_by = "the peers of the failed end"},
         {.id = "nccl.socket_connect_failed",
          .regex =
              R"((?:socket|ncclOsSocket)(?:Start|Poll)Connect(?:: connect to \S+ returned .*, exceeded error retry count|: connect returned .*, exceeded error retry count|: exceeded (?:retries|timeouts) \(|: [Cc]onnect to \S+ failed : | to \S+ failed with error ))",
          .must_contain = "Connect",
          .shown =
              "`socketPollConnect: connect to <host><port> returned Connection refused, exceeded error retry "
              "count after 35 attempts`, `socketStartConnect: Connect to <host><port> failed : <errno text>`",
          .example =
              R"(node2:9101:9101 [1] misc/socket.cc:623 NCCL WARN socketPollConnect: connect to 192.0.2.2<39811> returned Connection refused, exceeded error retry count after 35 attempts)",
          .implies = "bootstrap",
          .format = "%s: connect to %s returned %s, exceeded error retry count after %d attempts",
          .versions =
              "NCCL 2.27.3 to 2.30 (`connect returned %s, exceeded error retry count (%d)` in 2.24 to "
              "2.26; `exceeded retries (%d)`, `exceeded timeouts (%d)` and `Connect to %s failed : %s` "
              "in 2.16 to 2.23)",
          .cited = "NVIDIA/nccl src/misc/socket.cc (socketStartConnect, socketPollConnect), src/os/linux.cc "
                   "(v2.29.2-1)",
          .reported = "NVIDIA/nccl-tests#166 (`socketStartConnect: Connect to ... failed : Software caused "
                      "connection abort`)",
          .meaning = "a connection could not be set up: nobody listens there (the peer is gone), or the host "
                     "is unreachable (interface, routing, firewall)",
          .site = "bootstrap,dead_rank,configuration",
          .printed_by = "the connecting rank; the address is the one it could not reach"},
         {.id = "nccl.socket_connect_retry",
          .regex =
              R"((?:socket|ncclOsSocket)(?:Start|Poll)Connect: connect (?:to \S+ )?returned .*, retrying \(\d+/\d+\) after sleep for \d+ msec)",
          .must_contain = "retrying (",
          .shown = "`socketStartConnect: connect to <host><port> returned Connection refused, retrying "
                   "(3/34) after sleep for 300 msec`",
          .example =
              R"(node2:9101:9101 [1] NCCL INFO socketStartConnect: connect to 192.0.2.2<39811> returned Connection refused, retrying (3/34) after sleep for 300 msec)",
          .role = SignatureRole::kEvidence,
          .implies = "connect_retry",
          .format = "%s: connect to %s returned %s, retrying (%d/%ld) after sleep for %u msec",
          .versions =
              "NCCL 2.27.3 to 2.30, at INFO (NCCL_DEBUG=INFO); `connect returned %s, retrying (%d/%ld) "
              "after sleep for %u msec` in 2.24 to 2.26",
          .cited = "NVIDIA/nccl src/misc/socket.cc (socketConnectCheck, v2.28.9-1)",
          .meaning =
              "a connection was refused or got no answer and is tried again, NCCL_SOCKET_RETRY_CNT times "
              "(34), the n-th after n x NCCL_SOCKET_RETRY_SLEEP_MSEC (100 ms): a root not listening yet "
              "(one or two at startup), or one this rank cannot reach (its interface, route, a firewall)",
          // No site of its own: one or two retries are a normal start; diagnose names a rank that keeps
          // retrying while the others wait (a rank kept out of the bootstrap).
          .site = "",
          .printed_by = "the connecting rank"},
         {.id = "nccl.net_socket_progress_error",
          .regex = R"(NET/Socket : socket progress error)",
          .must_contain = "socket progress error",
          .shown = "`NET/Socket : socket progress error`",
          .example =
              R"(node1:4242:4300 [0] transport/net_socket.cc:508 NCCL WARN NET/Socket : socket progress error)",
          .implies = "async_error",
          .format = "NET/Socket : socket progress error",
          .versions = "NCCL 2.x (socket transport)",
          .cited = "NVIDIA/nccl src/transport/net_socket.cc",
          .meaning = "the socket transport failed a request, after a closed or failed socket line",
          .site = "dead_rank,degraded_link",
          .printed_by = "the rank whose proxy progressed the socket"}},
};

}  // namespace ncclfi::harness
