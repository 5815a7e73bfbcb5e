%% @doc The behaviour of a request kind (rpc, http, tcp, ...): one module per kind.
%%
%% `check/2' validates a request's spec from the scenario (keys other than `target' and
%% `timeout_ms') against its target. A user opens one connection per kind and target with
%% `connect/1' (lazily, at its first request), sends requests over it with `request/3', and
%% closes it at the end of its session. A request that cannot be made because the connection is
%% gone returns `{error, Reason, closed}'; the next request reconnects.
-module(beamscale_load_request).

-export([run/4, close/2]).
-export_type([conn/0, result/0]).

-type conn() :: term().
%% A kind asked for the response (`http' with `respond => true') returns it as a third element.
-type result() :: {ok, conn()} | {error, timeout | term(), conn() | closed}
                | {ok, conn() | closed, map()} | {error, term(), conn() | closed, map()}.

-callback check(Spec :: map(), beamscale_load_scenario:target()) ->
    {ok, map()} | {error, Key :: atom(), Message :: string()}.
-callback connect(Target :: map()) -> {ok, conn()} | {error, term()}.
-callback request(Spec :: map(), conn(), TimeoutMs :: pos_integer()) -> result().
-callback close(conn()) -> ok.

%% @doc Run one request on a connection (`closed': connect first).
-spec run(module(), map(), conn() | closed, {map(), pos_integer()}) -> result().
run(Mod, Target, closed, {Spec, Timeout}) ->
    case Mod:connect(Target) of
        {ok, Conn} -> Mod:request(Spec, Conn, Timeout);
        {error, Reason} -> {error, Reason, closed}
    end;
run(Mod, _Target, Conn, {Spec, Timeout}) ->
    Mod:request(Spec, Conn, Timeout).

%% @doc Close a connection if it is open.
-spec close(module(), conn() | closed) -> ok.
close(_Mod, closed) -> ok;
close(Mod, Conn) -> Mod:close(Conn).
