%% @doc Rendezvous between users (docs/scenario.md, "Rendezvous"; Tsung's `ack="global"'): one
%% coordinator per launcher, so per load node. The first N users to reach a rendezvous wait
%% until N are there, then all go on; users after the first N pass at once. A user waits at
%% most its timeout. Bounded: one entry per rendezvous name of the scenario, at most N waiters
%% each.
-module(beamscale_load_rendezvous).

-export([start_link/0, arrive/4]).

%% @doc Start the coordinator, linked to the caller (it ends with the launcher).
-spec start_link() -> pid().
start_link() ->
    Parent = self(),
    %% Linked (killed with a launcher that is killed) and monitoring it (gone with one that
    %% ends normally, whose link does not reach it).
    spawn_link(fun() -> monitor(process, Parent), loop(#{}) end).

%% @doc Reach the rendezvous `Name' of `N' users: `ok' once N have reached it (at once when N
%% already have), `timeout' after `TimeoutMs'.
-spec arrive(pid(), binary(), pos_integer(), pos_integer()) -> ok | timeout.
arrive(Pid, Name, N, TimeoutMs) ->
    %% An alias: a release that comes after the timeout is dropped, not left in the mailbox.
    Alias = alias([explicit_unalias]),
    Pid ! {arrive, Name, N, Alias},
    receive
        {go, Alias} -> unalias(Alias), ok
    after TimeoutMs ->
            unalias(Alias),
            receive {go, Alias} -> ok after 0 -> timeout end
    end.

loop(Points) ->
    receive
        {arrive, Name, N, Alias} -> loop(arrived(Name, N, Alias, Points));
        {'DOWN', _, process, _, _} -> ok;
        _ -> loop(Points)
    end.

arrived(Name, N, Alias, Points) ->
    case maps:get(Name, Points, {0, []}) of
        passed -> Alias ! {go, Alias}, Points;
        {Count, Waiting} when Count + 1 >= N ->
            _ = [A ! {go, A} || A <- [Alias | Waiting]],
            Points#{Name => passed};
        {Count, Waiting} -> Points#{Name => {Count + 1, [Alias | Waiting]}}
    end.
