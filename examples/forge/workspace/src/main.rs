fn main() {
    println!("inventory");
}
