%% @doc Requests an amoc user makes through beamscale's request kinds
%% (`beamscale_amoc:request/3,4'): each recorded as a step's request is (latency, errors by
%% reason, bytes, statuses, per name), over one connection per kind and target that the user
%% keeps until it ends. The user's metrics and connections are in its process dictionary: one
%% process per user.
-module(beamscale_amoc_request).

-export([request/4, begin_user/1, end_user/0, metrics/0, page_done/0]).

-define(METRICS, {?MODULE, metrics}).
-define(CONNS, {?MODULE, conns}).
%% Tsung's page of an amoc user: the first request's send and the last one's reply since the
%% user's last wait (`page_done/0').
-define(PAGE, {?MODULE, page}).
%% Checked requests kept per user: a scenario names a few; more are checked each time.
-define(CHECKED, {?MODULE, checked}).
-define(MAX_CHECKED, 64).
-define(DEFAULT_TIMEOUT_MS, 5000).

%% @doc This process is an amoc user recording into `Metrics'.
-spec begin_user(beamscale_load_metrics:metrics()) -> ok.
begin_user(Metrics) ->
    put(?METRICS, Metrics),
    put(?CONNS, #{}),
    ok.

%% @doc The user ends: its connections closed.
-spec end_user() -> ok.
end_user() ->
    ok = page_done(),
    maps:foreach(fun({Mod, _}, C) -> beamscale_load_request:close(Mod, C) end,
                 case erase(?CONNS) of undefined -> #{}; Cs -> Cs end),
    _ = erase(?CHECKED),
    ok.

%% @doc The user waits (an `amoc_throttle' wait, its think time) or ends: the requests since
%% its last wait are a page (Tsung's `page': from the first one's send to the last one's
%% reply), recorded into the run's `page' histogram.
-spec page_done() -> ok.
page_done() ->
    case {erase(?PAGE), metrics()} of
        {{First, Last}, #{} = M} -> beamscale_load_metrics:record(M, page, Last - First);
        _ -> ok
    end.

%% @doc The metrics of the amoc user this process is (`undefined' if none).
-spec metrics() -> beamscale_load_metrics:metrics() | undefined.
metrics() -> get(?METRICS).

%% @doc One request of the kind `Kind' (a scenario's step name: `http', `rpc', ...) to `Target'
%% (a scenario's target: `#{address => "HOST:PORT"}', ...), its spec as that step's; under
%% `Name' (a binary) in the per-name figures, or `none'. A bad kind, target or spec raises.
-spec request(binary() | none, atom(), map(), map()) -> ok | {ok, term()} | {error, term()}.
request(Name, Kind, Target0, Spec0) ->
    M = case metrics() of
            undefined -> error(not_an_amoc_user);
            M0 -> M0
        end,
    {Mod, Target, Spec, Timeout} = checked(Kind, Target0, Spec0),
    Key = {Mod, Target},
    Conns = get(?CONNS),
    _ = is_binary(Name) andalso beamscale_load_metrics:start_request(M, Name),
    try
        T0 = erlang:monotonic_time(),
        Result = beamscale_load_request:run(Mod, Target, maps:get(Key, Conns, closed),
                                            {Spec, Timeout}, M),
        Took = erlang:monotonic_time() - T0,
        put(?PAGE, case get(?PAGE) of
                       {First, _} -> {First, T0 + Took};
                       undefined -> {T0, T0 + Took}
                   end),
        beamscale_load_metrics:incr(M, requests),
        {Conn, Out} = outcome(M, Result, Took),
        put(?CONNS, Conns#{Key => Conn}),
        Out
    after
        _ = is_binary(Name) andalso beamscale_load_metrics:stop_request()
    end.

%% No intended start: a scenario's request is sent when its code sends it, so both latencies
%% are the one measured.
outcome(M, {ok, Conn}, Took) -> latency(M, Took), {Conn, ok};
outcome(M, {ok, Conn, Resp}, Took) -> latency(M, Took), {Conn, {ok, Resp}};
outcome(M, {error, R, Conn, _Resp}, Took) -> failed(M, R, Took), {Conn, {error, R}};
outcome(M, {error, R, Conn}, Took) -> failed(M, R, Took), {Conn, {error, R}}.

%% A timeout or a reply refused (a status) took its time; a connection that failed did not.
failed(M, R, Took) ->
    beamscale_load_metrics:error(M, R),
    case R of
        timeout -> latency(M, Took);
        {status, _} -> latency(M, Took);
        _ -> ok
    end.

latency(M, Took) ->
    beamscale_load_metrics:record(M, latency, Took),
    beamscale_load_metrics:record(M, sent, Took).

checked(Kind, Target, Spec) ->
    Cache = case get(?CHECKED) of undefined -> #{}; C -> C end,
    case Cache of
        #{{Kind, Target, Spec} := Checked} -> Checked;
        _ ->
            Checked = check(Kind, Target, Spec),
            _ = map_size(Cache) < ?MAX_CHECKED andalso
                put(?CHECKED, Cache#{{Kind, Target, Spec} => Checked}),
            Checked
    end.

check(Kind, Target0, Spec) ->
    Mod = case beamscale_load_kinds:by_name(Kind) of
              {ok, Found} -> Found;
              error -> error({unknown_kind, Kind, beamscale_load_kinds:names()})
          end,
    Target = try beamscale_load_scenario_where:target(Target0)
             catch throw:{bad, Path, Why} -> error({bad_target, Path, lists:flatten(Why)})
             end,
    Timeout = maps:get(timeout_ms, Spec, ?DEFAULT_TIMEOUT_MS),
    case Mod:check(maps:without([timeout_ms], Spec), Target) of
        {ok, Checked} -> {Mod, Target, Checked, Timeout};
        {error, K, Msg} -> error({bad_request, Kind, K, lists:flatten(Msg)})
    end.
