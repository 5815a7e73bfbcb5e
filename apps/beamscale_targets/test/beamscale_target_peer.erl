%% Test helper: a real peer node under test with beamscale_bench's code loaded as binaries, the
%% way the executor loads it.
-module(beamscale_target_peer).
-export([start/1, stop/1]).

start(Label) ->
    {ok, _} = beamscale_node:distribute(),
    Erl = os:find_executable("erl"),
    {ok, #{node := Node} = H} =
        beamscale_node:start(Label, #{erl => Erl, flags => "", schedulers => 2}),
    [{module, M} = erpc:call(Node, code, load_binary, [M, F, B])
     || {M, F, B} <- beamscale_code:apps([beamscale_bench, beamscale_targets])],
    {ok, H}.

stop(H) ->
    ok = beamscale_node:stop(H),
    false = beamscale_node:alive(H),
    ok.
