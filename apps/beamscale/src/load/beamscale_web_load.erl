%% @doc What the live page (`beamscale_web') shows of a load run: `beamscale_loadtest' hands
%% it each second's row as `beamscale_load_run' merged it; the figures so far are kept in the web
%% server's feed state (the seconds as `summary.json' has them, the run's totals merged) and the
%% page and `/live.json' rendered anew (`beamscale_report_live') with the target's samples read
%% from the run directory, one render at a time (`beamscale_web:feed/3': seconds that come while
%% a render runs on a busy host make one render after it, not a backlog). Runs one after
%% another (saturate's levels) each start afresh.
-module(beamscale_web_load).

-behaviour(beamscale_seconds).

-export([start_run/3, second/2, stop/1, control/2, event/2]).

%% label: shown in the title; msacc: the share of each interval msacc was on.
-type info() :: #{dir := file:filename(), label := binary(), msacc := 0..100}.

%% The fields of a row that are not an interval's counts or histograms.
-define(ROW_ONLY, [t_s, phase, offered_per_s]).

%% @doc A load run begins: its phases and where its samples go.
-spec start_run(beamscale_web:web(), beamscale_load_scenario:scenario(), info()) -> ok.
start_run(Web, Scenario, #{dir := Dir, label := Label, msacc := Msacc}) ->
    Run = json(#{label => Label, msacc => Msacc,
                 phases => [beamscale_runinfo:to_json(P) || P <- maps:get(phases, Scenario)]}),
    feed(Web, fun(_) -> #{run => Run, dir => Dir, seconds => [], total => none,
                          state => running}
              end).

%% @doc One more second of the run (`beamscale_load_run''s row).
-spec second(beamscale_web:web(), beamscale_load_run:row()) -> ok.
second(Web, Row) -> feed(Web, fun(F) -> add(F, Row) end).

%% @doc The page's buttons steer the run with this token (`beamscale_loadtest_ctl').
-spec control(beamscale_web:web(), binary()) -> ok.
control(Web, Token) -> feed(Web, fun(F) -> F#{token => Token} end).

%% @doc A change `beamscale ctl' made: a mark on the charts.
-spec event(beamscale_web:web(), beamscale_load_run:event()) -> ok.
event(Web, Event) ->
    feed(Web, fun(F) -> F#{events => maps:get(events, F, []) ++ [json(Event)]} end).

%% @doc The run is over: the page says so and stops asking.
-spec stop(beamscale_web:web()) -> ok.
stop(Web) ->
    feed(Web, fun(#{state := _} = F) -> F#{state := done};
                 (F) -> F
              end).

%%% Internals

feed(Web, Update) -> beamscale_web:feed(Web, Update, fun render/1).

add(#{seconds := Secs, total := Total} = F, Row) ->
    Interval = maps:without(?ROW_ONLY, Row),
    Total1 = case Total of
                 none -> Interval;
                 _ -> beamscale_load_metrics:merge(Total, Interval)
             end,
    %% The second as summary.json holds it: the one-row summary's `per_second'.
    #{per_second := [Second]} = beamscale_load_results:summary(one([Row], Row, 1.0)),
    F#{seconds := [json(Second) | Secs], total := Total1}.

one(Rows, Total, Duration) ->
    #{rows => Rows, total => Total, duration_s => Duration, stopped => done,
      load_nodes => []}.

render(#{run := Run, dir := Dir, seconds := Secs, total := Total, state := State} = F) ->
    Summary = case Total of
                  none -> #{<<"per_second">> => []};
                  _ ->
                      Totals = json(beamscale_load_results:summary(
                                      one([], Total, float(max(length(Secs), 1))))),
                      Totals#{<<"per_second">> := lists:reverse(Secs)}
              end,
    Data = #{run => Run, summary => Summary#{<<"events">> => maps:get(events, F, [])},
             state => State, token => maps:get(token, F, none),
             samples => beamscale_store:read_rows(beamscale_format_rundir:path(Dir, samples)),
             lcnt => beamscale_store:read_rows(beamscale_format_rundir:path(Dir, lcnt))},
    #{page => beamscale_report_live:load_page(Data),
      json => beamscale_report_live:load_json(Data)};
render(_) -> #{page => <<"no run">>, json => <<"{}">>}.

%% Terms as the stored JSON files read back: binary keys, as the report's formatters take them.
json(Term) ->
    {ok, Object} = beamscale_format_json:decode(beamscale_format_json:encode(Term)),
    Object.
