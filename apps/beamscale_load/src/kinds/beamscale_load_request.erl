%% @doc The behaviour of a request kind: one module per kind (`beamscale_load_kinds' lists
%% them).
%%
%% `check/2' validates a request's spec from the scenario (keys other than `target' and
%% `timeout_ms') against its target. A user opens one connection per kind and target with
%% `connect/1' (lazily, at its first request), sends requests over it with `request/3', and
%% closes it at the end of its session. A request that cannot be made because the connection is
%% gone returns `{error, Reason, closed}'; the next request reconnects.
%%
%% The time `connect/1' takes (TCP, and TLS where the target has it) is recorded apart, in the
%% `connect' histogram, as Tsung reports its connect time. Kinds count the bytes they send and
%% receive (and a database kind the rows returned) with `count/2'; `run/5' moves the tally into
%% the run's counters after each request.
%%
%% A kind's module is the whole plugin; `beamscale_load_kinds:all/0' lists them, and nothing
%% else names a kind. Besides the four calls above, it declares (all but `name/0' optional,
%% with the default in brackets, read through `beamscale_load_kinds'):
%% <ul>
%% <li>`name/0': its terms step name (`{Name, #{...}}').</li>
%% <li>`features/0': the dynamic request keys it serves (`feature()'): `extract' and `match' need
%%     a reply to read, `cookies' and `auth' an HTTP head, `subst' placeholders in a Tsung
%%     element; `headers' and `head' are HTTP's reply headers and compiled head (none).</li>
%% <li>`sockets/1': the sockets one user holds to a target of it (0 for `rpc', which goes over
%%     distribution), for the file-limit estimate (1).</li>
%% <li>`format_error/1': the text of its own reasons `{Module, Reason}' (the term).</li>
%% <li>`tsung/0': `none' (the default), or the Tsung session type, element, attributes and
%%     `<server>' types it reads; then `from_tsung/3' translates its element (with
%%     `beamscale_load_tsung_request''s shared helpers) into a spec and the targets it uses.</li>
%% <li>`preflight/2': before the load, a request step's spec against its resolved target
%%     (a node target: its node), at any depth of the steps: `ok' or `{error, {Module, R}}'
%%     (the run is refused, said by its `format_error/1'); rpc checks the function it calls
%%     is there (`ok').</li>
%% <li>`measures/0': the named counts and the histograms of its own a run using it has
%%     (`{Counts, Histograms}', none): a histogram is a transaction of the run (a row of
%%     `summary.json''s `transactions' and of the page), recorded with `observe/2'.</li>
%% <li>`variant/1': a terms spec of this kind that is another kind's request, as
%%     `{Name, Spec}' (`http''s `version => 2' is an `http2' step), or `same' (`same').</li>
%% <li>`request_name/2': a request's name without a `label' (`beamscale_load_reqname'), from
%%     its checked spec (`static') or a dynamic request's template (`dynamic'): `http''s
%%     method and path as written; `default': the kind and the spec's `type' (`default').</li>
%% <li>Optionally `handle_push/3' and `push_socket/1': in a session with `bidi => true', what a
%%     server sends unasked while the user waits (a think, a `wait' step) is handed to
%%     `handle_push(Msg, Conn, Store)', which may answer it (a ping), and says `push' (counted
%%     as `pushed', kept in `Store' as the kind likes, ends a `wait' step) or `ignore', with the
%%     connection (`closed' if the message closed it). `push_socket/1' names the socket whose
%%     messages (`element(2, Msg)') are the connection's (`beamscale_load_push').</li>
%% </ul>
-module(beamscale_load_request).

-export([run/5, close/2, count/2, status/1, observe/2, record_observed/1,
         missing_callbacks/1, check_typed/3, metrics/0, named/1]).
-export_type([conn/0, result/0, feature/0, tsung/0]).

-type conn() :: term().
%% A kind asked for the response (`http' with `respond => true') returns it as a third element.
-type result() :: {ok, conn()} | {error, timeout | term(), conn() | closed}
                | {ok, conn() | closed, map()} | {error, term(), conn() | closed, map()}.

%% The dynamic request keys a kind serves (docs/scenario.md, "Dynamic scenarios").
-type feature() :: extract | match | cookies | auth | subst | headers | head.

-callback name() -> atom().
-callback features() -> [feature()].
-callback sockets(Target :: map()) -> non_neg_integer().
-callback format_error(Reason :: term()) -> iodata().
%% The Tsung session type, element, its attributes and the `<server>' types a kind reads.
%% `options': the names of the `<option type="ts_...">'s its `from_tsung/3' reads; `aliases':
%% other session types it reads as its own (http's `ts_webdav'); `ignored': those of its
%% attributes that change nothing sent (warned, `beamscale_load_tsung_dom').
-type tsung() :: none | #{type := string(), element := atom(), attributes := [atom()],
                          servers := [string()], options => [string()],
                          aliases => [string()], ignored => [atom()]}.

-callback tsung() -> tsung().
%% The `<request>' element, the kind's element inside it and the reader's context.
-callback from_tsung(Request :: tuple(), Element :: tuple(), Ctx :: map()) ->
    {Spec :: map(), [{atom(), map()}]}.
-callback handle_push(Msg :: term(), conn(), Store :: term()) ->
    {push | ignore, conn() | closed, Store :: term()}.
-callback push_socket(conn()) -> term().
-callback preflight(Spec :: map(), Target :: map()) -> ok | {error, {module(), term()}}.
%% The named counts and the histograms (as transactions) a run using the kind declares.
-callback measures() -> {[binary()], [atom()]}.
-callback variant(Spec :: map()) -> same | {Name :: atom(), Spec :: map()}.
-callback request_name(static | dynamic, Spec :: map()) -> unicode:chardata() | default.
%% Declarations with a default (`beamscale_load_kinds' reads them): a kind writes only those
%% that differ.
-optional_callbacks([features/0, sockets/1, format_error/1, tsung/0, preflight/2]).
-optional_callbacks([from_tsung/3, handle_push/3, push_socket/1, measures/0, variant/1]).
-optional_callbacks([request_name/2]).
-callback check(Spec :: map(), beamscale_load_scenario:target()) ->
    {ok, map()} | {error, Key :: atom(), Message :: string()}.
-callback connect(Target :: map()) -> {ok, conn()} | {error, term()}.
-callback request(Spec :: map(), conn(), TimeoutMs :: pos_integer()) -> result().
-callback close(conn()) -> ok.

%% The tally's process-dictionary key: `{BytesSent, BytesReceived, Rows, Status}' (`Status':
%% the reply's protocol status, an HTTP code, or `none'). A user is one
%% process that runs its requests one after the other, so a tally of its own needs no lock, and
%% the kinds need no metrics argument: the shared counters are touched once per request, not
%% once per packet. One key, not one per name: read and reset with one call per request. An atom,
%% not a tuple: the dictionary hashes its key at every call, and a tuple's hash made the tally
%% cost three times as much (0.35 against 0.11 µs per request, two counts and an erase).
-define(TALLY, '$beamscale_load_request_tally').
%% Durations a kind observed for its declared histograms: `[{Histogram, Us}]'.
-define(OBSERVED, '$beamscale_load_request_observed').
%% The metrics of the user's run, for a kind that records measures of its own (`measures/0').
-define(METRICS, '$beamscale_load_request_metrics').
-define(MAX_BACKOFF_MS, 60000).
%% Tsung's default `retry_timeout'.
-define(RETRY_TIMEOUT_MS, 10).

%% @doc Run one request on a connection (`closed': connect first), recording the connect time
%% and the bytes into `Metrics'.
-spec run(module(), map(), conn() | closed, {map(), pos_integer()},
          beamscale_load_metrics:metrics()) -> result().
run(Mod, Target, closed, {Spec, Timeout}, M) ->
    put(?METRICS, M),
    Start = erlang:monotonic_time(),
    case connect(Mod, Target, maps:get(max_retries, Target, 0),
                 maps:get(retry_timeout_ms, Target, ?RETRY_TIMEOUT_MS)) of
        {ok, Conn} ->
            beamscale_load_metrics:record(M, connect, erlang:monotonic_time() - Start),
            beamscale_load_metrics:incr(M, connections_opened),
            tally(M, gone(M, Mod:request(Spec, Conn, Timeout)));
        {error, Reason} -> tally(M, {error, Reason, closed})
    end;
run(Mod, _Target, Conn, {Spec, Timeout}, M) ->
    tally(M, gone(M, Mod:request(Spec, Conn, Timeout))).

%% An open connection the request left closed (dropped, or closed by the server) is counted
%% closed: the opened less the closed are Tsung's `connected'.
gone(M, {error, _, closed} = R) -> beamscale_load_metrics:incr(M, connections_closed), R;
gone(M, {ok, closed} = R) -> beamscale_load_metrics:incr(M, connections_closed), R;
gone(_M, R) -> R.

%% Tsung's `max_retries' and `retry_timeout': a failed connect is tried again that many times,
%% after a wait doubling from the timeout (capped at ?MAX_BACKOFF_MS); the last failure is the
%% request's.
connect(Mod, Target, 0, _Ms) -> Mod:connect(Target);
connect(Mod, Target, Retries, Ms) ->
    case Mod:connect(Target) of
        {ok, _} = Ok -> Ok;
        {error, _} ->
            timer:sleep(min(Ms, ?MAX_BACKOFF_MS)),
            connect(Mod, Target, Retries - 1, 2 * Ms)
    end.

tally(M, Result) ->
    record_observed(M),
    case erase(?TALLY) of
        undefined -> ok;
        {Sent, Received, Rows, Status} ->
            add(M, bytes_sent, Sent),
            add(M, bytes_received, Received),
            add(M, rows, Rows),
            _ = Status =:= none orelse beamscale_load_metrics:status(M, Status),
            ok
    end,
    Result.

add(_M, _Name, 0) -> ok;
add(M, Name, N) -> beamscale_load_metrics:add(M, Name, N).

%% @doc Count `N' bytes sent or received, or rows returned, by this user's current request.
-spec count(bytes_sent | bytes_received | rows, non_neg_integer()) -> ok.
count(Name, N) ->
    {S, R, Rows, St} = tally(),
    put(?TALLY, case Name of
                    bytes_sent -> {S + N, R, Rows, St};
                    bytes_received -> {S, R + N, Rows, St};
                    rows -> {S, R, Rows + N, St}
                end),
    ok.

%% @doc The status code of this user's current reply (HTTP's), counted per code by `run/5'.
-spec status(non_neg_integer()) -> ok.
status(Code) ->
    {S, R, Rows, _} = tally(),
    put(?TALLY, {S, R, Rows, Code}),
    ok.

tally() ->
    case get(?TALLY) of
        undefined -> {0, 0, 0, none};
        T -> T
    end.

%% @doc Record `Us' microseconds into `Hist', a histogram the kind declares (`measures/0'),
%% from its request or push: moved into the run's metrics after it (`record_observed/1').
-spec observe(atom(), non_neg_integer()) -> ok.
observe(Hist, Us) ->
    put(?OBSERVED, [{Hist, Us} | case get(?OBSERVED) of undefined -> []; L -> L end]),
    ok.

%% @doc The durations observed since the last call, recorded into `M' (those of a histogram
%% the run did not declare dropped).
-spec record_observed(beamscale_load_metrics:metrics()) -> ok.
record_observed(#{hists := Hists} = M) ->
    case erase(?OBSERVED) of
        undefined -> ok;
        L -> lists:foreach(
               fun({H, Us}) when is_map_key({tx, H}, Hists) ->
                       beamscale_load_metrics:record_us(M, {tx, H}, Us);
                  (_) -> ok
               end, L)
    end.

%% @doc The metrics of this user's run (`undefined' before its first connection).
-spec metrics() -> beamscale_load_metrics:metrics() | undefined.
metrics() -> get(?METRICS).

%% @doc Count one event of the named counter `Name' (a protocol's counter, Tsung's name, that the
%% kind declares in `measures/0'): nothing if the run does not keep it (a user outside a run).
-spec named(binary()) -> ok.
named(Name) ->
    case get(?METRICS) of
        #{named := {_, #{Name := _}}} = M -> beamscale_load_metrics:count(M, Name);
        _ -> ok
    end.

%% @doc Close a connection if it is open.
-spec close(module(), conn() | closed) -> ok.
close(_Mod, closed) -> ok;
close(Mod, Conn) ->
    _ = [beamscale_load_metrics:incr(M, connections_closed) || M <- [metrics()], M =/= undefined],
    Mod:close(Conn).

%% @doc The behaviour's required callbacks a loaded module does not export (`name/arity').
-spec missing_callbacks(module()) -> [string()].
missing_callbacks(Mod) ->
    _ = code:ensure_loaded(Mod),
    [lists:flatten(io_lib:format("~ts/~b", [F, A]))
     || {F, A} <- ?MODULE:behaviour_info(callbacks)
            -- ?MODULE:behaviour_info(optional_callbacks),
        not erlang:function_exported(Mod, F, A)].

%% @doc A spec of the form `#{type => T, ...}' checked for a kind whose types take the keys
%% `KeysByType' lists: an unknown type or key named, else `Build(Type, Spec)', which throws
%% `{bad, Key, Message}' for a bad value.
-spec check_typed(map(), #{atom() => [atom()]}, fun((atom(), map()) -> map())) ->
    {ok, map()} | {error, atom(), string()}.
check_typed(#{type := Type} = Spec, KeysByType, Build) when is_map_key(Type, KeysByType) ->
    Known = maps:get(Type, KeysByType),
    case [K || K <- maps:keys(Spec), K =/= type, not lists:member(K, Known)] of
        [K | _] -> {error, K, "unknown key (known: " ++ names([type | Known]) ++ ")"};
        [] -> try {ok, Build(Type, Spec)}
              catch throw:{bad, Key, Msg} -> {error, Key, Msg}
              end
    end;
check_typed(#{type := _}, KeysByType, _Build) ->
    {error, type, "expected one of " ++ names(lists:sort(maps:keys(KeysByType)))};
check_typed(_Spec, _KeysByType, _Build) -> {error, type, "missing"}.

names(Atoms) -> lists:join(", ", [atom_to_list(A) || A <- Atoms]).
