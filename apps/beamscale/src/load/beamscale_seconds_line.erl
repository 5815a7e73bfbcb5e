%% @doc A per-second handler (`beamscale_seconds'): the live line on the terminal
%% (`beamscale_load_results:live_line/1'); left out of the list with --quiet.
-module(beamscale_seconds_line).
-behaviour(beamscale_seconds).

-export([second/2, stop/1]).

%% @doc The second's line.
-spec second(term(), beamscale_load_run:row()) -> ok.
second(_, Row) -> io:put_chars(beamscale_load_results:live_line(Row)).

%% @doc Nothing to end.
-spec stop(term()) -> ok.
stop(_) -> ok.
