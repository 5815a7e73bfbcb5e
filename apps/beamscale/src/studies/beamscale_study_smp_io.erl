%% @doc `beamscale study smp-io': the SMP-for-IO thesis (seeds/thesis-smp-io-erlang-2012.txt,
%% chapters 4-5) on today's OTP. Mnesia and MariaDB, write and read sessions (and Mnesia reads
%% outside transactions, `async_dirty'), under the three SMP configurations, at a rising arrival
%% rate of sessions; per level the mean session duration, whether the configuration held the
%% load, and the target node's CPU, scheduler utilisation and busy-wait. MariaDB is loaded two
%% ways: the thesis's (rpc into a node whose pool talks to MariaDB) and straight over the MySQL
%% protocol from the load node (the `mysql' kind, configuration `direct'), so that the report
%% shows what the Erlang layer in between costs. The MariaDB server is started once for the
%% study (`beamscale_db') and stopped at its end, also on failure.
%% docs/studies/smp-io.md has the sizes and the mapping of the configurations.
-module(beamscale_study_smp_io).
-behaviour(beamscale_study).

-export([info/0, run/1, run/2, run/3, format_error/1, configs/1, cells/4, sizes/1]).
-export_type([size/0]).

%% `test' is the CT suites' size; the others are `--version'.
-type size() :: test | beamscale_bench:version().

%% @doc This study's name and summary.
-spec info() -> beamscale_study:info().
info() ->
    #{name => "smp-io", summary => "Mnesia and MariaDB sessions under SMP auto, 1 scheduler and "
                                   "'disabled', at rising load (the 2012 thesis)",
      options => [profile]}.

%% @doc Run the study at the size of `--version'.
-spec run(beamscale_study:opts()) -> {ok, file:filename()} | {error, term()}.
run(#{version := V} = Opts) -> run(Opts, V).

%% @doc Run the study at a given size (`test' for the test suites), with its own MariaDB.
-spec run(beamscale_study:opts(), size()) -> {ok, file:filename()} | {error, term()}.
run(Opts, Size) -> run(Opts, Size, start).

%% @doc Run the study at a given size; `{file, F}' uses the running MariaDB described by the
%% `connection.config' F instead of starting one (the test suites start theirs).
-spec run(beamscale_study:opts(), size(), start | {file, file:filename()}) ->
    {ok, file:filename()} | {error, term()}.
run(#{out := Out, name := Name} = Opts, Size, Db) ->
    Dir = filename:absname(filename:join(Out, Name)),
    ok = filelib:ensure_path(Dir),
    Params = sizes(Size),
    Configs = configs(one_core_erl()),
    DbFile = case Db of
                 start -> db_file(Dir);
                 {file, F} -> filename:absname(F)
             end,
    Cells = cells(Params, Configs, Dir, DbFile),
    Meta = meta(Size, Params, Configs),
    ok = beamscale_store:write_file(beamscale_format_rundir:path(Dir, study_json),
                                    beamscale_format_json:encode(Meta)),
    %% A Mnesia directory belongs to the node that made it: a resumed cell starts afresh.
    _ = file:del_dir_r(filename:join(Dir, "mnesia")),
    NeedsDb = lists:any(fun(#{target := T}) -> T =:= "mariadb" end, Cells),
    Result = with_db(NeedsDb andalso Db =:= start, Dir, fun() -> levels(Cells, Opts, Dir) end),
    _ = file:del_dir_r(filename:join(Dir, "mnesia")),
    case Result of
        {ok, Failed} ->
            report(Dir, Meta),
            [io:format("cell failed: ~ts~n", [C]) || {C, _} <- Failed, not maps:get(quiet, Opts)],
            {ok, Dir};
        {error, _} = Error -> Error
    end.

%% @doc One line for an error.
%% Its errors are the database's and the levels' own: `beamscale_error' sends them there.
-spec format_error(term()) -> iodata().
format_error(R) -> beamscale_error:format(R).

%% @doc The thesis's three configurations on today's OTP; `OneCore' is the erl pinned to one
%% core (`scripts/erl-one-core') or plain `erl' when it cannot be found.
-spec configs(string()) -> [#{config := string(), erl := string(), schedulers := pos_integer(),
                              flags := string(), thesis := string()}].
configs(OneCore) ->
    [#{config => "smp_auto", erl => "erl", schedulers => erlang:system_info(logical_processors),
       flags => "", thesis => "SMP auto"},
     #{config => "smp_1", erl => "erl", schedulers => 1, flags => "", thesis => "SMP, 1 scheduler"},
     #{config => "smp_off", erl => OneCore, schedulers => 1, flags => "+SDcpu 1:1 +SDio 1 +IOt 1",
       thesis => "SMP disabled (approximation)"}].

%% @doc The sizes: operations per session, the first rate (sessions/s) of each target's search,
%% the hold time of a level, the records written before read levels, the configurations used,
%% and the search (`beamscale_study_levels'): climb factor, bracket tolerance, highest rate and
%% seconds per cell. `test' runs one level per cell (its highest rate is its first).
-spec sizes(size()) -> map().
sizes(test) ->
    #{ops => 20, hold_s => 1, prefill => 200, configs => ["smp_auto", "smp_off"],
      rates => #{"mnesia" => [5], "mariadb" => [5]},
      search => #{factor => 2, tolerance => 0.2, max_rate => 5, budget_s => 30}};
sizes(short) ->
    #{ops => 100, hold_s => 2, prefill => 2000, configs => all,
      rates => #{"mnesia" => [40], "mariadb" => [10]},
      search => #{factor => 3, tolerance => 0.2, max_rate => 100000, budget_s => 26}};
sizes(intermediate) ->
    #{ops => 500, hold_s => 10, prefill => 10000, configs => all,
      rates => #{"mnesia" => [2], "mariadb" => [1]},
      search => #{factor => 2, tolerance => 0.1, max_rate => 100000, budget_s => 180}};
sizes(long) ->
    #{ops => 500, hold_s => 30, prefill => 50000, configs => all,
      rates => #{"mnesia" => [2], "mariadb" => [1]},
      search => #{factor => 2, tolerance => 0.05, max_rate => 100000, budget_s => 600}}.

%% @doc The cells of a size: every target and operation under every configuration, and
%% MariaDB's operations the direct way.
-spec cells(map(), [map()], file:filename(), file:filename()) -> [beamscale_study_levels:cell()].
cells(#{configs := Names} = P, Configs, Dir, DbFile) ->
    Chosen = [C || #{config := N} = C <- Configs, Names =:= all orelse lists:member(N, Names)],
    [cell(P, T, Op, C, Dir, DbFile) || {T, Op} <- [{"mnesia", "write"}, {"mnesia", "read"},
                                            {"mnesia", "read_dirty"}, {"mariadb", "write"},
                                            {"mariadb", "read"}],
                               C <- Chosen]
    ++ [direct(P, Op, Dir, DbFile) || Op <- ["write", "read"]].

%% MariaDB without an Erlang node in between: each session logs in over the MySQL protocol,
%% sends the same statements as the rpc way's target, one by one, and closes (Tsung's ts_mysql).
%% A node still runs the setup (the table made afresh, the records of a read cell written), its
%% pool closed before the levels; the statements come from `beamscale_study_smp_io_sql'.
direct(#{ops := Ops, hold_s := Hold, rates := Rates, prefill := Prefill} = P, Op, Dir, DbFile) ->
    Call = fun(F) -> "%%beamscale_study_smp_io_sql:" ++ F ++ "%%" end,
    {Sql, Existing} = case Op of
                          "write" -> {Call("insert"), 0};
                          "read" -> {Call("select"), Prefill}
                      end,
    searched(P, "mariadb",
    #{target => "mariadb", op => Op, config => "direct", erl => "erl",
      schedulers => erlang:system_info(logical_processors), flags => "", kind => mysql,
      db_file => DbFile,
      setup => setup("mariadb", Op, "direct", Prefill, {Dir, DbFile})
               ++ [{beamscale_target_mysql, stop, []}],
      before_levels => fun(_) -> beamscale_study_smp_io_sql:init(DbFile, Existing) end,
      steps => [{mysql, #{type => connect, user => Call("user"), password => Call("password"),
                          database => Call("database")}},
                {loop, Ops, [{mysql, #{type => sql, 'query' => Sql}}]},
                {mysql, #{type => close}}],
      levels => [#{rate => R, hold_s => Hold, ops => Ops} || R <- maps:get("mariadb", Rates)]}).

cell(#{ops := Ops, hold_s := Hold, rates := Rates, prefill := Prefill} = P, T, Op, C, Dir,
     DbFile) ->
    #{config := Name, erl := Erl, schedulers := S, flags := Flags} = C,
    Timeout = (Hold + max(2, Hold)) * 1000 + 10000,
    {Mod, Fun, Extra} = operation(T, Op),
    Call = {beamscale_target_check, call, [Mod, Fun, [Ops | Extra]]},
    searched(P, T,
             #{target => T, op => Op, config => Name, erl => Erl, schedulers => S, flags => Flags,
               kind => rpc, setup => setup(T, Op, Name, Prefill, {Dir, DbFile}),
               steps => [{rpc, #{call => Call, timeout_ms => Timeout}}],
               levels => [#{rate => R, hold_s => Hold, ops => Ops} || R <- maps:get(T, Rates)]}).

%% With a search, the cell's first rate is where it starts; its levels are the search's.
searched(#{search := S, ops := Ops, hold_s := Hold, rates := Rates}, T, Cell) ->
    [Start | _] = maps:get(T, Rates),
    Cell#{levels := [], search => S#{start => Start, hold_s => Hold, ops => Ops}};
searched(_P, _T, Cell) -> Cell.

operation("mnesia", "write") -> {beamscale_target_mnesia, write, [transaction]};
operation("mnesia", "read") -> {beamscale_target_mnesia, read, [transaction]};
operation("mnesia", "read_dirty") -> {beamscale_target_mnesia, read, [async_dirty]};
operation("mariadb", "write") -> {beamscale_target_mysql, write, []};
operation("mariadb", "read") -> {beamscale_target_mysql, read, []}.

%% Mnesia gets a fresh directory per cell and the thesis's raised dump settings; read cells
%% write their records first; MariaDB's connection file is where `beamscale db' writes it.
setup("mnesia", Op, Config, Prefill, {Dir, _}) ->
    MDir = filename:join([Dir, "mnesia", Config ++ "_" ++ Op]),
    [{beamscale_target_mnesia, start, [#{dir => MDir, dump_log_write_threshold => 50000,
                                         dc_dump_limit => 40}]}
     | [{beamscale_target_mnesia, write, [Prefill]} || Op =/= "write"]];
setup("mariadb", Op, _Config, Prefill, {_, DbFile}) ->
    [{beamscale_target_mysql, start, [#{db_file => DbFile, reset => true}]}
     | [{beamscale_target_mysql, write, [Prefill]} || Op =/= "write"]].

levels(Cells, Opts, Dir) ->
    Seed = maps:get(seed, Opts, erlang:unique_integer([positive])),
    beamscale_study_levels:run(Cells, maps:merge(#{dir => Dir, quiet => maps:get(quiet, Opts),
                                                   seed => Seed},
                                                 maps:with([web, profile], Opts))).

db_dir(Dir) -> filename:join(Dir, "db").

db_file(Dir) -> filename:join(db_dir(Dir), "connection.config").

%% The server is started once when a cell needs it and stopped whatever happens; one left by
%% a killed run of the same name is stopped first.
with_db(false, _Dir, Fun) -> Fun();
with_db(true, Dir, Fun) ->
    Opts = beamscale_db:defaults(#{dir => db_dir(Dir)}),
    _ = beamscale_db:stop(Opts),
    case beamscale_db:start(Opts) of
        {ok, _} ->
            try Fun()
            after beamscale_db:stop(Opts)
            end;
        {error, _} = Error -> Error
    end.

%% The erl of "SMP disabled": scripts/erl-one-core, found from the working directory or from
%% where this code was loaded (the escript or _build), else plain erl (not pinned).
one_core_erl() ->
    Starts = [cwd(), filename:dirname(code:which(?MODULE))]
             ++ [filename:dirname(S) || S <- [script_name()], S =/= ""],
    case [F || D <- Starts, F <- [find_up(filename:absname(D), "scripts/erl-one-core")],
               F =/= none] of
        [F | _] -> F;
        [] -> "erl"
    end.

cwd() ->
    {ok, D} = file:get_cwd(),
    D.

script_name() ->
    try escript:script_name() catch _:_ -> "" end.

find_up(Dir, Rel) ->
    F = filename:join(Dir, Rel),
    case {filelib:is_regular(F), filename:dirname(Dir)} of
        {true, _} -> F;
        {false, Dir} -> none;
        {false, Up} -> find_up(Up, Rel)
    end.

meta(Size, #{ops := Ops, hold_s := Hold}, Configs) ->
    #{study => <<"smp-io">>, size => Size, ops_per_session => Ops, hold_s => Hold,
      otp_release => list_to_binary(erlang:system_info(otp_release)),
      logical_cores => erlang:system_info(logical_processors),
      configs => [#{config => list_to_binary(N), thesis => list_to_binary(T),
                    flags => list_to_binary(string:trim(io_lib:format("+S ~b:~b ~s", [S, S, F]))),
                    erl => list_to_binary(filename:basename(E))}
                  || #{config := N, thesis := T, schedulers := S, flags := F, erl := E}
                         <- Configs]
                 ++ [#{config => <<"direct">>, thesis => <<"MariaDB only: the MySQL protocol from "
                                                         "the load node, no Erlang node between">>,
                       flags => <<>>, erl => <<"-">>}]}.

report(Dir, Meta) ->
    [Rows, Caps] = [beamscale_store:read_rows(beamscale_format_rundir:path(Dir, F))
                    || F <- [levels, capacity]],
    ok = beamscale_store:write_file(beamscale_format_rundir:path(Dir, index),
                                    beamscale_report_smp_io:html(
                                      Meta, Rows, Caps, beamscale_profile:read_levels(Dir))).
