%% @doc The `rpc' request kind, the thesis's `ts_rpc': a `call' of `M:F(A)' on the target node
%% waits for its result, a `cast' only sends it. A call fails with an exception, with a result
%% that does not match its `expect' pattern (`beamscale_load_expect') or, without one, with a
%% result `{error, _}'.
-module(beamscale_load_rpc).
-behaviour(beamscale_load_request).

-export([check/2, connect/1, request/3, close/1]).
-export([name/0, sockets/1, tsung/0, from_tsung/3, preflight/2, format_error/1]).

-include_lib("xmerl/include/xmerl.hrl").

%% A code path may be loaded slowly on a loaded machine: as long as a target's set-up may take.
-define(PREFLIGHT_MS, 60000).

-import(beamscale_load_tsung_dom, [check_attrs/2, attr/2, attr/3, req/3, fail/4]).

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

%% @doc Before the load: the function a call or cast names is on its node (a `code_path'
%% that leaves its module out would fail every request of the run).
-spec preflight(map(), map()) -> ok | {error, {?MODULE, term()}}.
preflight(#{module := M, function := F, args := A}, #{node := Node}) ->
    case exported(Node, M, F, length(A)) of
        true -> ok;
        false -> {error, {?MODULE, {missing, M, F, length(A)}}}
    end;
preflight(_Spec, _Target) -> ok.

%% A node that does not answer cannot run it either.
exported(Node, M, F, Arity) ->
    try erpc:call(Node, code, ensure_loaded, [M], ?PREFLIGHT_MS) of
        {module, M} -> erpc:call(Node, erlang, function_exported, [M, F, Arity], ?PREFLIGHT_MS);
        _ -> false
    catch _:_ -> false
    end.

%% @doc The text of its own reasons; the others as terms.
-spec format_error(term()) -> iodata().
format_error({missing, M, F, A}) ->
    io_lib:format("~p:~p/~b is not there (module missing from its code_path?)", [M, F, A]);
format_error(R) -> io_lib:format("~0tp", [R]).

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

%% @doc The kind's step name.
-spec name() -> rpc.
name() -> rpc.

%% @doc None: calls go over distribution.
-spec sockets(map()) -> 0.
sockets(_Target) -> 0.

%% @doc The SMP-for-IO thesis's `ts_rpc' sessions and their `<rpc>' element.
-spec tsung() -> beamscale_load_request:tsung().
tsung() -> #{type => "ts_rpc", element => rpc, servers => [],
             attributes => [type, module, function, arguments, node, expect]}.

%% @doc An `<rpc>' element (below).
-spec from_tsung(#xmlElement{}, #xmlElement{}, map()) -> {map(), [{atom(), map()}]}.
from_tsung(_Req, E, Ctx) -> tsung_rpc(E, Ctx).

%% The thesis's `<rpc type module function arguments node>': `arguments' are the terms between
%% the parentheses of the call (arguments="500" is write(500)); beamscale's `expect' is the
%% pattern a call's result must match (`beamscale_load_expect:parse/1').
tsung_rpc(E, #{pis := Pis} = Ctx) ->
    check_attrs(E, Ctx),
    Type = case req(E, type, Ctx) of
               "call" -> call;
               "cast" -> cast;
               T -> fail(E, Ctx, "type \"~ts\" (expected call or cast)", [T])
           end,
    Args = case beamscale_format_terms:term("[" ++ attr(E, arguments, "") ++ "]") of
               {ok, A} -> A;
               error -> fail(E, Ctx, "arguments \"~ts\" are not Erlang terms separated by commas",
                             [attr(E, arguments)])
           end,
    Mfa = {beamscale_load_tsung_request:atom(E, module, req(E, module, Ctx), Ctx),
           beamscale_load_tsung_request:atom(E, function, req(E, function, Ctx), Ctx), Args},
    NodeText = req(E, node, Ctx),
    %% The targets of processing instructions are found by name, without making an atom.
    Short = beamscale_load_tsung_request:node_name(NodeText),
    {Name, Used} = case [N || {N, _} <- Pis, atom_to_list(N) =:= Short] of
                       [PiName | _] -> {PiName, []};
                       [] ->
                           [fail(E, Ctx, "node \"~ts\" is not name@host", [NodeText])
                            || not lists:member($@, NodeText)],
                           Node = beamscale_load_tsung_request:atom(E, node, NodeText, Ctx),
                           {Node, [{Node, #{node => Node}}]}
                   end,
    {maps:merge(#{Type => Mfa, target => Name}, expect(E, Type, Ctx)), Used}.

expect(E, Type, Ctx) ->
    case {attr(E, expect), Type} of
        {undefined, _} -> #{};
        {_, cast} -> fail(E, Ctx, "expect on a cast: a cast has no result (type=\"call\")", []);
        {Text, call} ->
            case beamscale_load_expect:parse(Text) of
                {ok, P} -> #{expect => P};
                {error, Msg} -> fail(E, Ctx, "expect \"~ts\": ~ts", [lists:sublist(Text, 60), Msg])
            end
    end.
