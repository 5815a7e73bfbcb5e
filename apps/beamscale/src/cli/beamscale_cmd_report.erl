%% @doc `beamscale report RUN_DIR': rebuild `summary.csv', `summary.json' and `index.html' of a
%% run directory from its stored files alone (no node is started, nothing is measured).
-module(beamscale_cmd_report).
-behaviour(beamscale_cmd).

-export([info/0, do/1, format_error/1]).

%% @doc This command's name, summary and options.
-spec info() -> beamscale_cmd:info().
info() ->
    #{name => "report", summary => "rebuild a run's summaries and index.html from its files",
      usage => "beamscale report RUN_DIR", options => []}.

%% @doc Write the report; print the path of `index.html'.
-spec do(beamscale_args:parsed()) -> beamscale_cmd:outcome().
do(#{args := [Dir]}) ->
    case beamscale_writer:write(Dir) of
        {ok, Index} ->
            incomplete(Dir),
            %% The page's path is the last line, for scripts.
            io:format("~ts~n", [Index]);
        {error, _} = Error -> Error
    end;
do(#{args := Args}) ->
    {error, {usage, length(Args)}}.

%% A run that did not finish still gets its report; what it lacks is said, not only left out.
incomplete(Dir) ->
    [io:format("cut short: no ~ts (the load did not end); the page shows what load.csv and "
               "errors.csv hold~n", [lists:join(", ", Missing)])
     || Missing <- [beamscale_writer:cut_short(Dir)], Missing =/= []],
    case beamscale_writer:missing(Dir) of
        {_, _, []} -> ok;
        {Done, Expected, Missing} ->
            Jobs = [io_lib:format("~ts @ ~ts (~b of ~b)", [B, Env, D, E])
                    || {B, Env, D, E} <- Missing],
            io:format("incomplete: ~b of ~b iterations; not measured: ~ts~n"
                      "(run the same command again to continue)~n",
                      [Done, Expected, lists:join(", ", Jobs)])
    end.

%% @doc One line for this command's errors.
-spec format_error(term()) -> iodata().
format_error({usage, N}) ->
    io_lib:format("report needs one run directory, got ~b arguments", [N]).
