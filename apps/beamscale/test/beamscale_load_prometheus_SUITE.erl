%% `beamscale load --metrics PORT' scraped by a real Prometheus (Debian's `prometheus', started
%% here with its own configuration and storage in priv_dir, on a free port of 127.0.0.1, scraping
%% every second; stopped by its OS pid): the load's request counter and latency histogram are
%% read back through Prometheus' HTTP API while the load runs, and its per-tag series (a tagged
%% request's) as Prometheus parsed them.
-module(beamscale_load_prometheus_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([scraped/1]).
-export([scraped/0]).

suite() -> [{timetrap, {minutes, 2}}].

all() -> [scraped].

init_per_suite(Config) ->
    {ok, _} = application:ensure_all_started(inets),
    Priv = ?config(priv_dir, Config),
    [MetricsPort, PromPort] = free_ports(2),
    Dir = filename:join(Priv, "prometheus-beamscale-load"),
    ok = filelib:ensure_path(filename:join(Dir, "data")),
    Conf = filename:join(Dir, "prometheus.yml"),
    ok = file:write_file(Conf, io_lib:format(
        "global:~n  scrape_interval: 1s~n  evaluation_interval: 1s~n"
        "scrape_configs:~n  - job_name: beamscale~n    static_configs:~n"
        "      - targets: ['127.0.0.1:~b']~n", [MetricsPort])),
    Prom = open_port({spawn_executable, os:find_executable("prometheus")},
                     [{args, ["--config.file=" ++ Conf,
                              "--storage.tsdb.path=" ++ filename:join(Dir, "data"),
                              "--web.listen-address=127.0.0.1:" ++ integer_to_list(PromPort)]},
                      exit_status, binary, stderr_to_stdout]),
    {os_pid, OsPid} = erlang:port_info(Prom, os_pid),
    Config1 = [{prom, {Prom, OsPid}}, {prom_port, PromPort}, {metrics_port, MetricsPort}
               | Config],
    case wait_for(fun() -> get(PromPort, "/-/ready") =:= {ok, 200} end, 30000) of
        ok -> Config1;
        timeout -> end_per_suite(Config1), ct:fail("prometheus did not start")
    end.

end_per_suite(Config) ->
    %% By its OS pid whatever the port: the port closed with init_per_suite's process, and
    %% prometheus does not stop when its stdin closes.
    {_Prom, OsPid} = ?config(prom, Config),
    _ = os:cmd("kill " ++ integer_to_list(OsPid)),
    ok = beamscale_test_cli:no_strays().

scraped() -> [{doc, "A load's requests and latency buckets are in Prometheus while it runs, "
               "and a tagged request's series with the tag's key as label."}].
scraped(Config) ->
    Priv = ?config(priv_dir, Config),
    Scenario = filename:join(Priv, "prom.scenario"),
    ok = file:write_file(Scenario,
        "{targets, [{sut, #{start => #{erl => \"erl\", flags => \"+sbwt none\",\n"
        "    init => {beamscale_target_workers, start, [32, 5]}}}}]}.\n"
        "{phases, [{main, #{duration_s => 8, rate => 50}}]}.\n"
        "{sessions, [{one, #{steps => [{rpc, #{call => {beamscale_target_workers, request, []},"
        " tags => #{flow => \"checkout\"}}}]}}]}.\n{drain_s, 1}.\n"),
    Load = beamscale_test_cli:open(["load", Scenario, "--name", "prom", "--out", Priv,
                                    "--metrics", integer_to_list(?config(metrics_port, Config)),
                                    "--quiet"]),
    PromPort = ?config(prom_port, Config),
    %% Read back while the load runs: the counter grows past 50 requests (a second's worth).
    ok = wait_for(fun() -> value(PromPort, "beamscale_load_requests_total") > 50 end, 60000),
    Buckets = query(PromPort, "beamscale_load_latency_seconds_bucket"),
    ?assert(length(Buckets) >= 14),
    Le = fun(L) -> hd([binary_to_integer(V) || #{<<"metric">> := #{<<"le">> := B},
                                                 <<"value">> := [_, V]} <- Buckets, B =:= L])
         end,
    %% 5 ms of service: few within 1 ms, all within 10 s.
    ?assert(Le(<<"0.001">>) < Le(<<"10.0">>)),
    ?assertEqual(Le(<<"+Inf">>), Le(<<"10.0">>)),
    ok = wait_for(fun() -> value(PromPort, "beamscale_load_tag_requests_total") > 50 end, 60000),
    [#{<<"metric">> := Labels}] = query(PromPort, "beamscale_load_tag_requests_total"),
    ?assertMatch(#{<<"flow">> := <<"checkout">>}, Labels),
    ?assert(length(query(PromPort, "beamscale_load_tag_latency_seconds_bucket")) >= 14),
    {0, _} = beamscale_test_cli:wait(Load, 60000).

value(Port, Query) ->
    case query(Port, Query) of
        [#{<<"value">> := [_, V]}] -> binary_to_integer(V);
        _ -> 0
    end.

query(Port, Query) ->
    {ok, {{_, 200, _}, _, Body}} =
        httpc:request(get, {lists:flatten(io_lib:format(
                                "http://127.0.0.1:~b/api/v1/query?query=~s", [Port, Query])),
                            []}, [{timeout, 5000}], [{body_format, binary}]),
    {ok, #{<<"data">> := #{<<"result">> := Result}}} = beamscale_format_json:decode(Body),
    Result.

get(Port, Path) ->
    case httpc:request(get, {"http://127.0.0.1:" ++ integer_to_list(Port) ++ Path, []},
                       [{timeout, 2000}], []) of
        {ok, {{_, Status, _}, _, _}} -> {ok, Status};
        Error -> Error
    end.

wait_for(_F, Ms) when Ms =< 0 -> timeout;
wait_for(F, Ms) ->
    case F() of
        true -> ok;
        false -> timer:sleep(500), wait_for(F, Ms - 500)
    end.

%% Ports free now: listened on, then closed.
free_ports(N) ->
    Socks = [listen() || _ <- lists:seq(1, N)],
    Ports = [port(S) || S <- Socks],
    [gen_tcp:close(S) || S <- Socks],
    Ports.

listen() ->
    {ok, S} = gen_tcp:listen(0, [{ip, {127, 0, 0, 1}}]),
    S.

port(S) ->
    {ok, P} = inet:port(S),
    P.
