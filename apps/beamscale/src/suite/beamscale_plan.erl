%% @doc The plan of a run: which benchmark runs in which environment, with which settings. Pure.
%%
%% An environment is one point of bencherl's space: an erl installation, an erl argument set, a
%% scheduler count and a node count (nodes in all, the node under test included). With `cross'
%% every combination is planned; with `bencherl' two one-dimensional sweeps: schedulers on the
%% first node count, and nodes on the first scheduler count (per erl and argument set).
-module(beamscale_plan).

-export([jobs/2, environments/1, settings/2]).
-export_type([env/0, job/0]).

-type env() :: #{otp := atom(), erl := string(), erl_args := atom(), flags := string(),
                 schedulers := pos_integer(), nodes := pos_integer()}.
-type job() :: #{bench := atom(), version := beamscale_bench:version(), env := env(),
                 iterations := pos_integer(), warmups := non_neg_integer(),
                 timeout := pos_integer()}.

%% @doc Every job of a run, benchmark by benchmark, in the order they will run.
-spec jobs(beamscale_config:config(), [atom()]) -> [job()].
jobs(Config, Benchmarks) ->
    [job(Bench, Settings, Env)
     || Bench <- Benchmarks,
        Settings <- [settings(Config, Bench)],
        Env <- environments(Settings)].

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
-spec settings(beamscale_config:config(), atom()) -> beamscale_config:config().
settings(#{overrides := Overrides} = Config, Bench) ->
    maps:merge(Config, maps:get(Bench, Overrides, #{})).

job(Bench, Settings, Env) ->
    #{bench => Bench, env => Env, version => maps:get(version, Settings),
      iterations => maps:get(iterations, Settings), warmups => maps:get(warmups, Settings),
      timeout => maps:get(timeout, Settings)}.

%% Keep the first of equal points, in order.
unique(L) -> unique(L, #{}).
unique([], _Seen) -> [];
unique([H | T], Seen) when is_map_key(H, Seen) -> unique(T, Seen);
unique([H | T], Seen) -> [H | unique(T, Seen#{H => true})].
