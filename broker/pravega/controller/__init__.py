"""A minimal Pravega controller (gRPC ControllerService) in front of the reference segment store.

controller.proto is the API as the clients call it; controller_pb2.py and controller_pb2_grpc.py are generated from
it by scripts/gen_pravega_controller.sh (committed, so that running the broker needs grpcio and protobuf only,
never a compiler; tests/unit/test_pravega_controller_proto.py fails when they are stale). model.py holds the
metadata, store_link.py speaks to the segment store, service.py answers the calls, server.py listens.
"""
