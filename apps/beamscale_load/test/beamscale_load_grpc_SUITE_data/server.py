# A gRPC server for beamscale_load_grpc_SUITE, with grpc's generic handlers (no generated code):
# messages are raw bytes. On 127.0.0.1:PORT (argv[1]) until killed.
#   test.Echo/Unary          the request back
#   test.Echo/ServerStream   the request back as many times as its first byte says
#   test.Echo/ClientStream   the number of messages received, as one decimal message
#   test.Echo/Bidi           each message back as it comes
#   test.Echo/Unavailable    status UNAVAILABLE
#   test.Echo/Slow           waits out the client's deadline: DEADLINE_EXCEEDED
import sys
import time
from concurrent import futures

import grpc


def unary(req, ctx):
    return req


def server_stream(req, ctx):
    for _ in range(req[0] if req else 0):
        yield req


def client_stream(reqs, ctx):
    return str(sum(1 for _ in reqs)).encode()


def bidi(reqs, ctx):
    for r in reqs:
        yield r


def unavailable(req, ctx):
    ctx.abort(grpc.StatusCode.UNAVAILABLE, "down for maintenance")


def slow(req, ctx):
    while (ctx.time_remaining() or 0) > 0.05:
        time.sleep(0.01)
    ctx.abort(grpc.StatusCode.DEADLINE_EXCEEDED, "too slow")


handlers = {
    "Unary": grpc.unary_unary_rpc_method_handler(unary),
    "ServerStream": grpc.unary_stream_rpc_method_handler(server_stream),
    "ClientStream": grpc.stream_unary_rpc_method_handler(client_stream),
    "Bidi": grpc.stream_stream_rpc_method_handler(bidi),
    "Unavailable": grpc.unary_unary_rpc_method_handler(unavailable),
    "Slow": grpc.unary_unary_rpc_method_handler(slow),
}
server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("test.Echo", handlers),))
server.add_insecure_port("127.0.0.1:" + sys.argv[1])
server.start()
server.wait_for_termination()
