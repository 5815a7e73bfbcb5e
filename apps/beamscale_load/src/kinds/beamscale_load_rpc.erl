%% @doc The `rpc' request kind, the thesis's `ts_rpc': a `call' of `M:F(A)' on the target node
%% waits for its result, a `cast' only sends it. A call fails with an exception, with a result
%% that does not match its `expect' pattern (`beamscale_load_expect') or, without one, with a
%% result `{error, _}'.
-module(beamscale_load_rpc).
-behaviour(beamscale_load_request).

-export([check/2, connect/1, request/3, close/1]).

%% @doc `#{call => {M, F, Args}, expect => Pattern}' (`expect' optional) or
%% `#{cast => {M, F, Args}}' against a node target.
-spec check(map(), beamscale_load_scenario:target()) -> {ok, map()} | {error, atom(), string()}.
check(_Spec, #{host := _}) -> {error, target, "rpc needs a node target, not host:port"};
check(#{expect := _, cast := _}, _Target) ->
    {error, expect, "a cast has no result to expect: give call => {M, F, A}"};
check(#{expect := P} = Spec, Target) ->
    case beamscale_load_expect:check(P) of
        ok -> case check(maps:remove(expect, Spec), Target) of
                  {ok, Checked} -> {ok, Checked#{expect => {pattern, P}}};
                  Error -> Error
              end;
        {error, Msg} -> {error, expect, Msg}
    end;
check(Spec, _Target) ->
    case maps:to_list(Spec) of
        [{Type, {M, F, A}}] when (Type =:= call orelse Type =:= cast), is_atom(M), is_atom(F),
                                 is_list(A) ->
            {ok, #{type => Type, module => M, function => F, args => A}};
        _ -> {error, call, "expected call => {Module, Function, Args} or cast => {M, F, A}, "
                           "and for a call optionally expect => Pattern"}
    end.

%% @doc The connection is the node itself (distribution keeps one per node).
-spec connect(map()) -> {ok, node()}.
connect(#{node := Node}) -> {ok, Node}.

%% @doc One call or cast.
-spec request(map(), node(), pos_integer()) -> beamscale_load_request:result().
request(#{type := call, module := M, function := F, args := A} = Spec, Node, Timeout) ->
    try erpc:call(Node, M, F, A, Timeout) of
        Result -> result(maps:get(expect, Spec, no_error), Result, Node)
    catch
        error:{erpc, timeout} -> {error, timeout, Node};
        Class:Reason -> {error, {Class, Reason}, Node}
    end;
request(#{type := cast, module := M, function := F, args := A}, Node, _Timeout) ->
    ok = erpc:cast(Node, M, F, A),
    {ok, Node}.

result(no_error, {error, E}, Node) -> {error, {rpc_error, E}, Node};
result(no_error, _, Node) -> {ok, Node};
result({pattern, P}, Result, Node) ->
    case beamscale_load_expect:match(P, Result) of
        true -> {ok, Node};
        false -> {error, {unexpected, Result}, Node}
    end.

%% @doc Nothing to close.
-spec close(node()) -> ok.
close(_Node) -> ok.
