%% @doc `beamscale load --metrics PORT': each second's row added to the run's totals and served
%% as Prometheus text on `http://127.0.0.1:PORT/metrics' (`beamscale_web', the totals kept in
%% its feed state; `beamscale_report_prometheus' formats them).
-module(beamscale_seconds_prom).
-behaviour(beamscale_seconds).

-export([start/1, second/2, stop/1]).

%% @doc Serve the totals of nothing yet on `Web'.
-spec start(beamscale_web:web()) -> beamscale_web:web().
start(Web) ->
    beamscale_web:feed(Web, fun(_) -> bodies(beamscale_report_prometheus:new()) end),
    Web.

%% @doc One more second of the load.
-spec second(beamscale_web:web(), beamscale_load_run:row()) -> ok.
second(Web, Row) ->
    beamscale_web:feed(Web, fun(T) -> bodies(beamscale_report_prometheus:add(T, Row)) end).

%% @doc The load is over: the last totals stay until the server closes.
-spec stop(beamscale_web:web()) -> ok.
stop(_Web) -> ok.

bodies(Totals) ->
    {Totals, #{page => <<"beamscale load metrics: see /metrics">>, json => <<"{}">>,
               metrics => beamscale_report_prometheus:text(Totals)}}.
