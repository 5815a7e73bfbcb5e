%% @doc `instructions.csv' of a run directory measured with the instruction clock: per
%% benchmark, phase, args and environment (the key of `measurements.csv'), each launch's counted
%% samples in instructions retired per call, less the empty loop's (docs/run-directory.md).
%% Read back by `beamscale compare' as hostile input: bounded in size, each row checked, a bad
%% one named by line and column.
-module(beamscale_instr_store).

-export([write/2, read/1, file/1, open_append/1, append/4, format_error/1]).

-define(HEADER, [benchmark, phase, args, otp, erl_args, schedulers, nodes, launch, sample,
                 instructions]).
%% A count for each sample of each launch of each key: far below this.
-define(MAX_BYTES, 64 * 1024 * 1024).

%% @doc The file in run directory `Dir'.
-spec file(file:filename()) -> file:filename().
file(Dir) -> beamscale_format_rundir:path(Dir, instructions).

%% @doc Write the counts of `Dir''s keys (`beamscale_store:key()', phase given), launch by
%% launch, as one whole file.
-spec write(file:filename(), [{{binary(), binary(), binary()}, binary(), [[number()]]}]) -> ok.
write(Dir, Counts) ->
    Rows = [beamscale_format_csv:line([B, Phase, Args] ++ beamscale_format_env:fields(Env)
                                      ++ [L, S, float(X)])
            || {{B, Args, Env}, Phase, Launches} <- Counts,
               {L, Samples} <- lists:enumerate(Launches),
               {S, X} <- lists:enumerate(Samples)],
    beamscale_store:write_file(file(Dir), [beamscale_format_csv:line(?HEADER) | Rows]).

%% @doc The file of run directory `Dir' opened for appending (`run --clock instructions': one
%% iteration's rows in one write; a line cut short by a kill is dropped when reopened).
-spec open_append(file:filename()) -> file:io_device().
open_append(Dir) -> element(2, beamscale_store:open_csv(file(Dir), ?HEADER)).

%% @doc Append iteration `N' of launch `L' of `Key': instructions retired per phase (`run''s
%% sample is its iteration; per iteration, no empty loop: a call of `run/3' between two NIF
%% calls).
-spec append(file:io_device(), beamscale_store:key(), {pos_integer(), pos_integer()},
             [{string(), non_neg_integer()}]) -> ok.
append(Fd, {B, Args, Env}, {L, N}, Counts) ->
    file:write(Fd, [beamscale_format_csv:line([B, P, Args] ++ beamscale_format_env:fields(Env)
                                              ++ [L, N, X]) || {P, X} <- Counts]).

%% @doc The counts of run directory `Dir' per key (`beamscale_stats:key()'), launch by launch
%% in launch order.
-spec read(file:filename()) ->
    {ok, beamscale_stats_instr:counts(beamscale_stats:key())} | {error, {?MODULE, term()}}.
read(Dir) ->
    File = file(Dir),
    case {filelib:is_regular(File), beamscale_format_file:read(File, ?MAX_BYTES)} of
        {false, _} -> {error, {?MODULE, {missing, File}}};
        {true, {ok, Bin}} -> parse(File, Bin);
        {true, {error, Why}} -> {error, {?MODULE, {unreadable, File, Why}}}
    end.

parse(File, Bin) ->
    case beamscale_format_csv:parse(Bin) of
        {[Header | Rows], _} ->
            case [atom_to_binary(H) || H <- ?HEADER] of
                Header -> rows(File, lists:enumerate(2, Rows), #{});
                _ -> {error, {?MODULE, {header, File}}}
            end;
        {[], _} -> {error, {?MODULE, {header, File}}}
    end.

rows(_File, [], Acc) ->
    {ok, maps:map(fun(_, ByLaunch) ->
                          [lists:reverse(Xs) || {_, Xs} <- lists:sort(maps:to_list(ByLaunch))]
                  end, Acc)};
rows(File, [{Line, Row} | Rest], Acc) ->
    case row(Row) of
        {ok, Key, Launch, X} ->
            Add = fun(ByLaunch) -> maps:update_with(Launch, fun(Xs) -> [X | Xs] end, [X],
                                                    ByLaunch)
                  end,
            rows(File, Rest, maps:update_with(Key, Add, Add(#{}), Acc));
        {bad, Column} -> {error, {?MODULE, {bad_row, File, Line, Column}}}
    end.

row([B, P, A, O, E, S, N, L, Sample, X]) ->
    Checked = [{schedulers, positive(S)}, {nodes, positive(N)}, {launch, positive(L)},
               {sample, positive(Sample)}, {instructions, number(X)}],
    case [C || {C, error} <- Checked] of
        [] ->
            [{ok, Si}, {ok, Ni}, {ok, Li}, _, {ok, Xf}] = [V || {_, V} <- Checked],
            {ok, {B, P, A, O, E, Si, Ni}, Li, Xf};
        [C | _] -> {bad, C}
    end;
row(_) -> {bad, columns}.

positive(T) ->
    case string:to_integer(T) of
        {I, <<>>} when is_integer(I), I > 0 -> {ok, I};
        _ -> error
    end.

number(T) ->
    case string:to_float(T) of
        {F, <<>>} when is_float(F) -> {ok, F};
        _ ->
            case string:to_integer(T) of
                {I, <<>>} when is_integer(I) -> {ok, float(I)};
                _ -> error
            end
    end.

%% @doc One line for an error.
-spec format_error(term()) -> iodata().
format_error({missing, File}) ->
    [File, ": not found (a run measured with --clock instructions keeps its counts there)"];
format_error({unreadable, File, Why}) ->
    [File, ": ", beamscale_format_file:format_error(Why)];
format_error({header, File}) ->
    [File, ": its first line is not the header of instructions.csv (",
     lists:join(",", [atom_to_list(H) || H <- ?HEADER]), ")"];
format_error({bad_row, File, Line, columns}) ->
    io_lib:format("~ts:~b: expected ~b columns", [File, Line, length(?HEADER)]);
format_error({bad_row, File, Line, Column}) ->
    io_lib:format("~ts:~b: column ~s is not ~s", [File, Line, Column, what(Column)]).

what(instructions) -> "a number";
what(_) -> "a positive integer".
