%% @doc The points of a `beamscale bench --name NAME' run kept as they are measured, in
%% `OUT/NAME/points/': `plan' (what was asked: the expressions, inputs and options) and one
%% file per point measured (`N.term', its result row). A rerun of the same command finds them
%% and measures only the points not there (an interrupted run resumes); a command asking
%% something else of a directory that holds a run is refused, so nothing is overwritten
%% silently.
-module(beamscale_micro_points).

-export([open/2, kept/2, keep/3, format_error/1]).
-export_type([points/0]).

%% The points directory, or `none' (no --name: nothing kept).
-type points() :: file:filename() | none.

%% @doc The points directory of run directory `Dir' for `Plan', and how many points it holds
%% already: created for a directory that is new (or empty), taken up again when it holds the
%% same plan, refused otherwise.
-spec open(file:filename(), beamscale_micro:plan()) ->
    {ok, file:filename(), non_neg_integer()} | {error, {?MODULE, term()}}.
open(Dir, Plan) ->
    Points = beamscale_format_rundir:path(Dir, points),
    Asked = asked(Plan),
    case file:consult(filename:join(Points, "plan")) of
        {ok, [Asked]} -> {ok, Points, length(filelib:wildcard("*.term", Points))};
        {ok, _} -> {error, {?MODULE, {other_plan, Dir}}};
        {error, _} ->
            case file:list_dir(Dir) of
                {ok, [_ | _]} -> {error, {?MODULE, {other_run, Dir}}};
                _ ->
                    ok = filelib:ensure_path(Points),
                    ok = beamscale_store:write_file(filename:join(Points, "plan"),
                                                    io_lib:format("~tp.~n", [Asked])),
                    {ok, Points, 0}
            end
    end.

%% @doc The row of point `N' measured before, or `none'.
-spec kept(points(), pos_integer()) -> {ok, map()} | none.
kept(none, _N) -> none;
kept(Points, N) ->
    case file:consult(file(Points, N)) of
        {ok, [Row]} when is_map(Row) -> {ok, Row};
        _ -> none
    end.

%% @doc Keep the row of point `N' (whole or not at all: `beamscale_store:write_file/2').
-spec keep(points(), pos_integer(), map()) -> ok.
keep(none, _N, _Row) -> ok;
keep(Points, N, Row) ->
    beamscale_store:write_file(file(Points, N), io_lib:format("~tp.~n", [Row])).

%% @doc One line for an error.
-spec format_error(term()) -> iodata().
format_error({other_plan, Dir}) ->
    io_lib:format("~ts holds a bench run of other expressions or options: run the same command "
                  "to resume it, or give another --name", [Dir]);
format_error({other_run, Dir}) ->
    io_lib:format("~ts holds something else than a bench run: give another --name", [Dir]).

%%% Internals

file(Points, N) -> filename:join(Points, integer_to_list(N) ++ ".term").

%% What makes two commands the same run: the plan without the progress printer (a fun) and the
%% seed of the launches' order (drawn anew by each command; the order is not the result).
asked(Plan) -> {bench_plan, maps:without([progress, points, seed], Plan)}.
