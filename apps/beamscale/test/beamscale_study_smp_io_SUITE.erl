%% The smp-io and pollset studies at their test size against real nodes and a real MariaDB
%% (started here; the suite fails, not skips, when it cannot start): levels.csv rows, the
%% report's charts, a rerun that continues, and no stray mariadbd or beam.smp afterwards.
-module(beamscale_study_smp_io_SUITE).
-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

%% How long a stopped node or server may take to leave before it counts as a stray.
-define(STRAY_WAIT_MS, 5000).
-define(STRAY_POLL_MS, 250).

-export([all/0, suite/0, init_per_suite/1, end_per_suite/1]).
-export([smp_io/1, pollset/1, pollset_resume/1]).
-export([smp_io/0, pollset/0, pollset_resume/0]).

suite() -> [{timetrap, {minutes, 3}}].

all() -> [smp_io, pollset, pollset_resume].

%% A database that does not start fails every test case (a failing init_per_suite would only
%% skip them).
init_per_suite(Config) ->
    {ok, _} = beamscale_node:distribute(),
    Before = pids(),
    Opts = beamscale_db:defaults(#{dir => filename:join(?config(priv_dir, Config), "db")}),
    Pid = case beamscale_db:start(Opts) of
              {ok, #{pid := P}} -> P;
              Error -> {failed, Error}
          end,
    [{db, Opts}, {db_pid, Pid}, {pids_before, Before} | Config].

end_per_suite(Config) ->
    {ok, _} = beamscale_db:stop(?config(db, Config)),
    case ?config(db_pid, Config) of
        {failed, _} -> ok;
        Pid -> ?assertNot(beamscale_os:alive(Pid))
    end,
    Config.

smp_io() ->
    [{doc, "The smp-io study writes a checked levels.csv row per cell (MariaDB also the direct "
           "way), a capacity per cell, 6 level charts and 5 capacity charts."}].
smp_io(Config) ->
    ?assertMatch(P when is_list(P), ?config(db_pid, Config)),
    Opts = opts(Config, "smp"),
    DbFile = filename:join(maps:get(dir, ?config(db, Config)), "connection.config"),
    {ok, Dir} = beamscale_study_smp_io:run(Opts, test, {file, DbFile}),
    Rows = beamscale_store:read_rows(filename:join(Dir, "levels.csv")),
    Cells = beamscale_study_smp_io:cells(beamscale_study_smp_io:sizes(test),
                                         beamscale_study_smp_io:configs("erl"), Dir, DbFile),
    ?assertEqual(length(Cells), length(Rows)),
    ?assertEqual(lists:usort([{"mnesia", "write"}, {"mnesia", "read"}, {"mnesia", "read_dirty"},
                              {"mariadb", "write"}, {"mariadb", "read"}]),
                 lists:usort([{binary_to_list(T), binary_to_list(O)}
                              || #{target := T, op := O} <- Rows])),
    [check_row(R) || R <- Rows],
    check_capacities(Dir, Rows),
    Html = read(Dir, "index.html"),
    %% The direct way: a login, the 20 statements and a close per session, no error.
    Direct = [R || #{config := <<"direct">>} = R <- Rows],
    ?assertEqual([<<"read">>, <<"write">>], lists:sort([O || #{op := O} <- Direct])),
    [?assertEqual({22 * beamscale_format_csv:number(D), 0},
                  {beamscale_format_csv:number(N), beamscale_format_csv:number(E)})
     || #{done := D, requests := N, errors := E} <- Direct],
    %% One session chart per target and operation, and the transaction-vs-dirty chart; MariaDB's
    %% have the direct way as a third series.
    %% One capacity chart per target and operation, a bar per configuration.
    ?assertEqual(6 + 5, count(Html, <<"<svg">>)),
    ?assertEqual(5, count(Html, <<"data-series=\"1\"">>)),
    ?assertMatch({_, _}, binary:match(Html, <<"Capacity per configuration">>)),
    ?assertEqual(4, count(Html, <<"data-series=\"2\"">>)),
    ?assertEqual(2, count(Html, <<"data-series=\"3\"">>)),
    ?assertMatch({_, _}, binary:match(Html, <<"transaction / dirty">>)),
    no_strays(Config).

pollset() -> [{doc, "The pollset study writes 2 checked levels and its charts."}].
pollset(Config) ->
    {ok, Dir} = beamscale_study_pollset:run(opts(Config, "poll"), test),
    Rows = beamscale_store:read_rows(filename:join(Dir, "levels.csv")),
    ?assertEqual(2, length(Rows)),
    [check_row(R) || R <- Rows],
    [?assert(beamscale_format_csv:number(RPS) > 0) || #{requests_per_s := RPS} <- Rows],
    check_capacities(Dir, Rows),
    Html = read(Dir, "index.html"),
    ?assertMatch({_, _}, binary:match(Html, <<"io_t2_p2/s1">>)),
    ?assertMatch({_, _}, binary:match(Html, <<"Capacity per configuration">>)),
    %% requests/s and p99 charts, and wrk's when it is installed (else the report says so).
    case os:find_executable("wrk") of
        false ->
            ?assertEqual(3, count(Html, <<"<svg">>)),
            ?assertMatch({_, _}, binary:match(Html, <<"wrk is not installed">>));
        _ ->
            ?assertEqual(4, count(Html, <<"<svg">>)),
            Wrk = beamscale_store:read_rows(filename:join(Dir, "wrk.csv")),
            ?assertEqual([<<"io_t1/s1">>, <<"io_t2_p2/s1">>], [C || #{config := C} <- Wrk]),
            [?assert(beamscale_format_csv:number(RPS) > 0)
             || #{requests_per_s := RPS} <- Wrk]
    end,
    no_strays(Config).

%% A killed run leaves a half line: the rerun drops it and runs only the missing level; the
%% cell whose search ended (a row in capacity.csv) is not run again.
pollset_resume() -> [{doc, "A rerun after a half-written line redoes only the missing level."}].
pollset_resume(Config) ->
    Opts = opts(Config, "poll"),
    [File, CapFile] = [filename:join([maps:get(out, Opts), "poll", F])
                       || F <- ["levels.csv", "capacity.csv"]],
    [Header, First, _Second] = binary:split(read_file(File), <<"\n">>, [global, trim_all]),
    ok = file:write_file(File, [Header, "\n", First, "\n", "http,get,io_t2"]),
    [CapHeader, CapFirst, _] = binary:split(read_file(CapFile), <<"\n">>, [global, trim_all]),
    ok = file:write_file(CapFile, [CapHeader, "\n", CapFirst, "\n"]),
    {ok, Dir} = beamscale_study_pollset:run(Opts#{quiet := true}, test),
    Rows = beamscale_store:read_rows(File),
    ?assertEqual([<<"io_t1/s1">>, <<"io_t2_p2/s1">>], [C || #{config := C} <- Rows]),
    check_capacities(Dir, Rows),
    no_strays(Config).

%%% Helpers

opts(Config, Name) ->
    #{version => short, name => Name, out => filename:join(?config(priv_dir, Config), "runs"),
      quiet => false, seed => 7}.

check_row(#{held := Held, why := Why, offered_per_s := Off} = R) ->
    ?assert(lists:member(Held, [<<"true">>, <<"false">>])),
    ?assert(beamscale_format_csv:number(Off) > 0),
    case Held of
        <<"true">> ->
            ?assertEqual(<<"ok">>, Why),
            ?assert(beamscale_format_csv:number(maps:get(mean_session_ms, R)) > 0),
            ?assert(is_number(beamscale_format_csv:number(maps:get(cpu_pct, R))));
        <<"false">> -> ?assertNotEqual(<<"ok">>, Why)
    end.

%% One capacity.csv row per cell: the `test' size's search has its highest rate as its first,
%% so a cell that held its one level has that rate as its capacity (search stopped at
%% `max_rate', no rate not held above), one that did not has none (`below_start', the interval
%% up to that rate).
check_capacities(Dir, Rows) ->
    Caps = beamscale_store:read_rows(filename:join(Dir, "capacity.csv")),
    Key = fun(#{target := T, op := O, config := C}) -> {T, O, C} end,
    ?assertEqual(lists:sort([Key(R) || R <- Rows]), lists:sort([Key(C) || C <- Caps])),
    N = fun beamscale_format_csv:number/1,
    [case maps:get(held, R) of
         <<"true">> ->
             ?assertMatch(#{stopped := <<"max_rate">>, capacity_high_per_s := <<>>}, C),
             ?assertEqual(N(maps:get(offered_per_s, R)), N(maps:get(capacity_per_s, C))),
             ?assertEqual(N(maps:get(capacity_per_s, C)), N(maps:get(capacity_low_per_s, C)));
         <<"false">> ->
             ?assertMatch(#{stopped := <<"below_start">>, capacity_per_s := <<>>}, C),
             ?assertEqual(maps:get(why, R), maps:get(limited_by, C)),
             ?assertEqual(N(maps:get(offered_per_s, R)), N(maps:get(capacity_high_per_s, C)))
     end || R <- Rows, C <- Caps, Key(C) =:= Key(R)],
    ?assert(lists:all(fun(#{levels := L}) -> L =:= <<"1">> end, Caps)).

%% No emulator with this node's cookie (the nodes the studies start) and no mariadbd beyond the
%% suite's own is left.
%% A process stopped a moment ago may still be leaving: only one still there after a few seconds
%% is a stray, named with its command line.
no_strays(Config) -> no_strays(Config, ?STRAY_WAIT_MS).

no_strays(Config, Ms) ->
    Cookie = atom_to_list(erlang:get_cookie()),
    Mine = [P || P <- pids(), lists:member(P, ?config(pids_before, Config)) =:= false,
                 is_ours(P, Cookie, ?config(db_pid, Config))],
    case Mine of
        [_ | _] when Ms > 0 -> timer:sleep(?STRAY_POLL_MS), no_strays(Config, Ms - ?STRAY_POLL_MS);
        _ -> ?assertEqual([], [{P, cmdline(P)} || P <- Mine])
    end.

is_ours(Pid, Cookie, DbPid) ->
    case {comm(Pid), cmdline(Pid)} of
        {"beam.smp", Cmd} -> string:find(Cmd, Cookie) =/= nomatch;
        {"mariadbd", _} -> Pid =/= DbPid;
        _ -> false
    end.

pids() ->
    [Pid || Line <- string:lexemes(os:cmd("ps -e -o pid= -o comm="), "\n"),
            [Pid, Comm] <- [string:lexemes(Line, " ")],
            lists:member(Comm, ["beam.smp", "mariadbd"])].

comm(Pid) -> string:trim(os:cmd("ps -o comm= -p " ++ Pid)).

cmdline(Pid) ->
    case file:read_file("/proc/" ++ Pid ++ "/cmdline") of
        {ok, B} -> binary_to_list(binary:replace(B, <<0>>, <<" ">>, [global]));
        {error, _} -> ""
    end.

read(Dir, File) -> read_file(filename:join(Dir, File)).

read_file(F) ->
    {ok, B} = file:read_file(F),
    B.

count(Bin, Pat) -> length(binary:matches(Bin, Pat)).
