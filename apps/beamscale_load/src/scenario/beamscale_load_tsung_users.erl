%% @private Tsung's `<user session start_time unit>' in `<load>' (users at fixed times, beside or
%% instead of the `<arrivalphase>'s): each user is put in the phase running at its start time
%% (`users_at', seconds from that phase's start), or in a phase of its own after the last one.
%% Part of `beamscale_load_tsung_xml'; errors are thrown as it throws them.
-module(beamscale_load_tsung_users).

-export([place/4]).

-include_lib("xmerl/include/xmerl.hrl").

-import(beamscale_load_tsung_dom, [check_attrs/2, attr/3, req/3, non_negative/3, fail/4]).

-define(UNITS, [{"second", 1}, {"minute", 60}, {"hour", 3600}, {"millisecond", 0.001}]).
%% The phase holding the users after the arrival phases lasts this long past the last start.
-define(TAIL_S, 0.001).

%% @doc The phases `{Name, Map}' with the `<user>' elements `Users' placed in them; `Names' are
%% the file's session names (binaries). A file of `<user>'s only gives one phase `users'.
-spec place([#xmlElement{}], [{atom(), map()}], [binary()], map()) -> [{atom(), map()}].
place([], Phases, _Names, _Ctx) -> Phases;
place(Users, Phases, Names, Ctx) ->
    At = lists:keysort(1, [user(U, Names, Ctx) || U <- Users]),
    {Placed, Left, End} = lists:foldl(fun put/2, {[], At, 0}, Phases),
    lists:reverse(Placed) ++ [{users, #{duration_s => T - End + ?TAIL_S,
                                        users_at => [{S - End, N} || {S, N} <- Left]}}
                              || Left =/= [], {T, _} <- [lists:last(Left)]].

%% The users starting before a phase's end go in it, at their time from its start.
put({Name, #{duration_s := D} = P}, {Acc, At, From}) ->
    {In, Later} = lists:splitwith(fun({T, _}) -> T < From + D end, At),
    Phase = case In of
                [] -> P;
                _ -> P#{users_at => [{T - From, N} || {T, N} <- In]}
            end,
    {[{Name, Phase} | Acc], Later, From + D}.

user(U, Names, Ctx) ->
    check_attrs(U, Ctx),
    Name = unicode:characters_to_binary(req(U, session, Ctx)),
    [fail(U, Ctx, "session=\"~ts\": no <session> of that name", [Name])
     || not lists:member(Name, Names)],
    Unit = case lists:keyfind(attr(U, unit, "second"), 1, ?UNITS) of
               {_, S} -> S;
               false -> fail(U, Ctx, "unit \"~ts\" (known: second, minute, hour, millisecond)",
                             [attr(U, unit, "")])
           end,
    Start = case attr(U, start_time, undefined) of
                undefined -> 0;
                _ -> non_negative(U, start_time, Ctx) * Unit
            end,
    {Start, Name}.
