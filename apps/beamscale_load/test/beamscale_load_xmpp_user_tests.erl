-module(beamscale_load_xmpp_user_tests).

-include_lib("eunit/include/eunit.hrl").

-define(U, beamscale_load_xmpp_user).

%% Each test's domain is its own: the counts live in a persistent term per domain and id range.
counts(D, Max) ->
    A = persistent_term:get({?U, D, Max}),
    [atomics:get(A, I) || I <- lists:seq(1, Max + 1)].

conn(D, Max, N) -> #{domain => D, max => Max, n => N}.

%% Two users on one id (more users than userid_max): the first to leave leaves the id online
%% for the other, and the count of ids online (the last slot) goes to 0 only when both left.
shared_id_test() ->
    D = <<"shared.test">>,
    A = ?U:online(conn(D, 2, 1)),
    B = ?U:online(conn(D, 2, 1)),
    ?assertEqual([2, 0, 1], counts(D, 2)),
    ok = ?U:offline(A),
    ?assertEqual([1, 0, 1], counts(D, 2)),
    ok = ?U:offline(B),
    ?assertEqual([0, 0, 0], counts(D, 2)).

%% A user never online (its authentication failed) leaving changes nothing; one online is
%% counted once however often it is said.
offline_without_online_test() ->
    D = <<"never.test">>,
    On = ?U:online(conn(D, 3, 2)),
    ok = ?U:offline(conn(D, 3, 1)),
    ?assertEqual(On, ?U:online(On)),
    ?assertEqual([0, 1, 0, 1], counts(D, 3)).

%% A chat to an online user, while the only other id online is shared by a user gone and one
%% still there: that id is chosen every time (with a flag per id, the first to leave cleared
%% it, and a random id, this user's own half the time, was taken).
chat_to_shared_id_test() ->
    D = <<"chat.test">>,
    Gone = ?U:online(conn(D, 2, 1)),
    _Stays = ?U:online(conn(D, 2, 1)),
    ok = ?U:offline(Gone),
    Me = (?U:online(conn(D, 2, 2)))#{name => <<"user">>},
    Tos = [to(Me) || _ <- lists:seq(1, 20)],
    ?assertEqual([<<"user1@chat.test">>], lists:usort(Tos)).

to(C) ->
    {Iodata, _, _} = ?U:stanza(#{type => chat, destination => online, ack => no_ack}, C),
    {match, [J]} = re:run(iolist_to_binary(Iodata), "to='([^']*)'",
                          [{capture, all_but_first, binary}]),
    J.
