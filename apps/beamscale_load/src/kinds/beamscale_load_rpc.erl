%% @doc The `rpc' request kind, the thesis's `ts_rpc': a `call' of `M:F(A)' on the target node
%% waits for its result (which is not checked; an exception is an error), a `cast' only sends it.
-module(beamscale_load_rpc).
-behaviour(beamscale_load_request).

-export([check/2, connect/1, request/3, close/1]).

%% @doc `#{call => {M, F, Args}}' or `#{cast => {M, F, Args}}' against a node target.
-spec check(map(), beamscale_load_scenario:target()) -> {ok, map()} | {error, atom(), string()}.
check(_Spec, #{host := _}) -> {error, target, "rpc needs a node target, not host:port"};
check(Spec, _Target) ->
    case maps:to_list(Spec) of
        [{Type, {M, F, A}}] when (Type =:= call orelse Type =:= cast), is_atom(M), is_atom(F),
                                 is_list(A) ->
            {ok, #{type => Type, module => M, function => F, args => A}};
        _ -> {error, call, "expected call => {Module, Function, Args} or cast => {M, F, A}"}
    end.

%% @doc The connection is the node itself (distribution keeps one per node).
-spec connect(map()) -> {ok, node()}.
connect(#{node := Node}) -> {ok, Node}.

%% @doc One call or cast.
-spec request(map(), node(), pos_integer()) -> beamscale_load_request:result().
request(#{type := call, module := M, function := F, args := A}, Node, Timeout) ->
    try erpc:call(Node, M, F, A, Timeout) of
        _ -> {ok, Node}
    catch
        error:{erpc, timeout} -> {error, timeout, Node};
        Class:Reason -> {error, {Class, Reason}, Node}
    end;
request(#{type := cast, module := M, function := F, args := A}, Node, _Timeout) ->
    ok = erpc:cast(Node, M, F, A),
    {ok, Node}.

%% @doc Nothing to close.
-spec close(node()) -> ok.
close(_Node) -> ok.
