%% @doc Rendezvous between users (docs/scenario.md, "Rendezvous"; Tsung's `ack="global"'): one
%% coordinator per launcher, so per load node. The first N users to reach a rendezvous wait
%% until N are there, then all go on; users after the first N pass at once. A user waits at
%% most its timeout. Bounded: one entry per rendezvous name of the scenario, at most N waiters
%% each.
-module(beamscale_load_rendezvous).

-export([start_link/0, arrive/4, interaction/3]).

%% How long a `receive' waits for the coordinator's answer (it answers at once: a coordinator
%% that long behind lets the user go on without a sample).
-define(INTERACTION_MS, 5000).

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

%% @doc Tsung's `<interaction>': `send' notes the time of `Name' (a later send replaces it);
%% `receive' gives the time since it (native units), or `none' before any send.
-spec interaction(pid(), send | 'receive', atom() | binary()) -> {ok, integer()} | none.
interaction(Pid, send, Name) ->
    Pid ! {sent, Name, erlang:monotonic_time()},
    none;
interaction(Pid, 'receive', Name) ->
    Now = erlang:monotonic_time(),
    Alias = alias([reply]),
    Pid ! {sent_at, Name, Alias},
    receive
        {Alias, none} -> none;
        {Alias, Sent} -> {ok, max(0, Now - Sent)}
    after ?INTERACTION_MS -> unalias(Alias), none
    end.

%% The coordinator's map holds one entry per rendezvous and per interaction name of the
%% scenario: both are written in it.
loop(Points) ->
    receive
        {arrive, Name, N, Alias} -> loop(arrived(Name, N, Alias, Points));
        {sent, Name, T} -> loop(Points#{{sent, Name} => T});
        {sent_at, Name, Alias} -> Alias ! {Alias, maps:get({sent, Name}, Points, none)},
                                  loop(Points);
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
