%% @doc The plan of a run: which benchmark runs in which environment, with which settings. Pure.
%%
%% An environment is one point of bencherl's space: an erl installation, an erl argument set, a
%% scheduler count and a node count (nodes in all, the node under test included). With `cross'
%% every combination is planned; with `bencherl' two one-dimensional sweeps: schedulers on the
%% first node count, and nodes on the first scheduler count (per erl and argument set).
%%
%% Each point runs in `launches' fresh emulators. The launches of all points are interleaved:
%% launch 1 of every point, then launch 2 of every point, and so on, so that a slow spell of the
%% host falls on several points' launches rather than on every launch of one point. Within a
%% launch the order is drawn from the run's seed (`order/2'), anew for each launch, as hyperfine
%% and benchstat practise: a drift of the host then favours no release or environment.
-module(beamscale_plan).

-export([jobs/2, order/2, environments/1, settings/2, iterations/1, launch_of/2]).
-export_type([env/0, job/0]).

-type env() :: #{otp := atom(), erl := string(), erl_args := atom(), flags := string(),
                 schedulers := pos_integer(), nodes := pos_integer()}.
-type job() :: #{bench := atom(), version := beamscale_bench:version(), env := env(),
                 iterations := pos_integer(), warmups := non_neg_integer(),
                 timeout := pos_integer(), launch := pos_integer(),
                 launches := pos_integer(), node_names => [string()]}.

%% @doc Every job of a run in the order they will run: one job is one launch of a point,
%% round-robin over the points (benchmark by benchmark within a launch).
-spec jobs(beamscale_config:config(), [atom()]) -> [job()].
jobs(Config, Benchmarks) ->
    Points = [job(Bench, Settings, Env)
              || Bench <- Benchmarks,
                 Settings <- [settings(Config, Bench)],
                 Env <- environments(Settings)],
    Most = lists:max([0 | [K || #{launches := K} <- Points]]),
    [P#{launch := L} || L <- lists:seq(1, Most), #{launches := K} = P <- Points, L =< K].

%% @doc The jobs of `jobs/2' in the order a run takes them: launch by launch, each launch's
%% jobs in an order drawn from `Seed' (the same seed, the same order: a run can be replayed).
-spec order([job()], integer()) -> [job()].
order(Jobs, Seed) ->
    Launches = lists:usort([L || #{launch := L} <- Jobs]),
    {Rounds, _} = lists:mapfoldl(fun(L, Rand) ->
                                         {Keyed, Rand1} = keyed([J || #{launch := L1} = J <- Jobs,
                                                                      L1 =:= L], Rand, []),
                                         {[J || {_, J} <- lists:keysort(1, Keyed)], Rand1}
                                 end, rand:seed_s(exsss, Seed), Launches),
    lists:append(Rounds).

%% A random key per job: sorted by it, the jobs are shuffled (no two keys alike in practice, and
%% keysort keeps the plan's order if they were).
keyed([], Rand, Acc) -> {lists:reverse(Acc), Rand};
keyed([J | More], Rand, Acc) ->
    {X, Rand1} = rand:uniform_s(Rand),
    keyed(More, Rand1, [{X, J} | Acc]).

%% @doc The iterations launch `L' of a job measures: numbered on from the launches before it,
%% so an iteration's number names one measurement of the point whichever launch made it.
-spec iterations(job()) -> [pos_integer()].
iterations(#{launch := L, iterations := I}) -> lists:seq((L - 1) * I + 1, L * I).

%% @doc The launch iteration `N' of a point belongs to, with `I' iterations per launch.
-spec launch_of(pos_integer(), pos_integer()) -> pos_integer().
launch_of(N, I) -> (N - 1) div I + 1.

%% @doc The environments of a configuration (after per-benchmark overrides).
-spec environments(beamscale_config:config()) -> [env()].
environments(#{erls := Erls, erl_args := ArgSets, schedulers := Ss, nodes := Ns,
               sweep := Sweep}) ->
    Points = case Sweep of
                 cross -> [{S, N} || S <- Ss, N <- Ns];
                 bencherl -> unique([{S, hd(Ns)} || S <- Ss] ++ [{hd(Ss), N} || N <- Ns])
             end,
    [#{otp => Otp, erl => Erl, erl_args => Alias, flags => Flags, schedulers => S, nodes => N}
     || {Otp, Erl} <- Erls, {Alias, Flags} <- ArgSets, {S, N} <- Points].

%% @doc The configuration as it applies to one benchmark: its overrides laid over the rest.
%% Flag sets merge by alias (a benchmark's own flags for an alias replace the run's, its new
%% aliases are added, the run's others stay), as bencherl adds a bench.conf's to the run's.
-spec settings(beamscale_config:config(), atom()) -> beamscale_config:config().
settings(#{overrides := Overrides} = Config, Bench) ->
    Own = case maps:get(Bench, Overrides, #{}) of
              #{erl_args := Sets} = O -> O#{erl_args := merge(maps:get(erl_args, Config), Sets)};
              O -> O
          end,
    maps:merge(Config, Own).

merge(Run, Own) ->
    [case lists:keyfind(A, 1, Own) of
         {A, F} -> {A, F};
         false -> {A, F0}
     end || {A, F0} <- Run] ++ [S || {A, _} = S <- Own, not lists:keymember(A, 1, Run)].

job(Bench, Settings, Env) ->
    #{bench => Bench, env => Env, version => maps:get(version, Settings),
      iterations => maps:get(iterations, Settings), warmups => maps:get(warmups, Settings),
      timeout => maps:get(timeout, Settings), launch => 1,
      launches => maps:get(launches, Settings, 1),
      node_names => maps:get(node_names, Settings, [])}.

%% Keep the first of equal points, in order.
unique(L) -> unique(L, #{}).
unique([], _Seen) -> [];
unique([H | T], Seen) when is_map_key(H, Seen) -> unique(T, Seen);
unique([H | T], Seen) -> [H | unique(T, Seen#{H => true})].
